import BookpipePipeline
import BookpipeScan
import Foundation
import Synchronization
import Testing

/// The 429 gate's decisions, pure: the caller passes the instant.
@Suite struct UploadGateStateMachineTests {
    typealias Machine = UploadGateStateMachine<ManualClock.Instant>
    static func at(_ seconds: Int) -> ManualClock.Instant { ManualClock.Instant(offset: .seconds(seconds)) }

    @Test("An open gate lets every upload through; a 429 pauses it until Retry-After, then one probe goes")
    func pauseAndProbe() {
        var gate = Machine(longestWait: .seconds(900), defaultPause: .seconds(1))
        do { let action = gate.acquire(now: Self.at(0)); #expect(action == .send(isProbe: false)) }
        do { let action = gate.acquire(now: Self.at(0)); #expect(action == .send(isProbe: false)) }
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(30)), now: Self.at(1))
        do { let action = gate.acquire(now: Self.at(2)); #expect(action == .wait(until: Self.at(31))) }
        do { let action = gate.acquire(now: Self.at(31)); #expect(action == .send(isProbe: true)) }
        do { let action = gate.acquire(now: Self.at(31)); #expect(action == .waitForProbe) }
        do { let action = gate.acquire(now: Self.at(40)); #expect(action == .waitForProbe) }
        // The upload sent before the pause answers normally: that opens nothing.
        do { let woke = gate.finished(isProbe: false, rateLimitedFor: nil, now: Self.at(41)); #expect(!woke) }
        do { let action = gate.acquire(now: Self.at(41)); #expect(action == .waitForProbe) }
        // The probe is accepted: the gate opens and the waiters ask again.
        do { let woke = gate.finished(isProbe: true, rateLimitedFor: nil, now: Self.at(42)); #expect(woke) }
        do { let action = gate.acquire(now: Self.at(42)); #expect(action == .send(isProbe: false)) }
        #expect(gate.rateLimitedCount == 1)
    }

    @Test("A probe that gets 429 pauses the gate again; no Retry-After means the default pause")
    func probeRateLimitedAgain() {
        var gate = Machine(longestWait: .seconds(900), defaultPause: .seconds(1))
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(5)), now: Self.at(0))
        do { let action = gate.acquire(now: Self.at(5)); #expect(action == .send(isProbe: true)) }
        do { let woke = gate.finished(isProbe: true, rateLimitedFor: .some(nil), now: Self.at(6)); #expect(woke) }
        do { let action = gate.acquire(now: Self.at(6)); #expect(action == .wait(until: Self.at(7))) }
        do { let action = gate.acquire(now: Self.at(7)); #expect(action == .send(isProbe: true)) }
        #expect(gate.rateLimitedCount == 2)
    }

    @Test("A later 429 moves the pause's end later, never earlier")
    func pauseOnlyGrows() {
        var gate = Machine(longestWait: .seconds(900), defaultPause: .seconds(1))
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(60)), now: Self.at(0))
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(5)), now: Self.at(1))
        #expect(gate.pausedUntil == Self.at(60))
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(90)), now: Self.at(2))
        #expect(gate.pausedUntil == Self.at(92))
    }

    @Test("A pause longer than the longest wait is not waited out")
    func tooLong() {
        var gate = Machine(longestWait: .seconds(900), defaultPause: .seconds(1))
        gate.finished(isProbe: false, rateLimitedFor: .some(.seconds(3600)), now: Self.at(0))
        do { let action = gate.acquire(now: Self.at(0)); #expect(action == .giveUp(remaining: .seconds(3600))) }
        do { let action = gate.acquire(now: Self.at(2700)); #expect(action == .wait(until: Self.at(3600))) }
    }
}

/// ``UploadGate`` on a ``ManualClock``: the waits are sleeps on the clock, the probe's waiters
/// suspend until its answer. No real time passes in these tests.
@Suite(.timeLimit(.minutes(5))) struct UploadGateTests {
    typealias Permit = UploadGate<ManualClock>.Permit

    /// Lets the gate's suspended uploads register (no clock involved): yields until `condition`
    /// holds; records an issue instead of spinning for ever when it never does.
    static func waitUntil(_ condition: () -> Bool, sourceLocation: Testing.SourceLocation = #_sourceLocation) async {
        for _ in 0..<1_000_000 {
            if condition() || Task.isCancelled { return }
            await Task.yield()
        }
        Issue.record("the gate never reached the expected state", sourceLocation: sourceLocation)
    }

    @Test("After a 429 nothing goes before Retry-After; then exactly one probe, and the others wait for its answer")
    func pauseThenOneProbe() async throws {
        let clock = ManualClock()
        let gate = UploadGate(clock: clock)
        let first = try await gate.acquire()
        #expect(!first.isProbe)
        gate.finished(first, rateLimited: .some(.seconds(30)))
        try await withThrowingTaskGroup(of: Permit.self) { group in
            for _ in 0..<3 { group.addTask { try await gate.acquire() } }
            await clock.waitForSleepers(count: 3)
            #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(30)))
            clock.advance(by: .seconds(29))
            #expect(clock.sleeperCount == 3)   // 29 s later: still nothing sent
            clock.advance(by: .seconds(1))
            let probe = try #require(try await group.next())
            #expect(probe.isProbe)
            await Self.waitUntil { gate.waitingForProbeCount == 2 }
            #expect(clock.sleeperCount == 0)   // they wait for the answer, not for a time
            gate.finished(probe, rateLimited: nil)
            var others: [Permit] = []
            for try await permit in group { others.append(permit) }
            #expect(others.map(\.isProbe) == [false, false])
        }
        #expect(gate.rateLimitedCount == 1)
        #expect(gate.waitingForProbeCount == 0)
    }

    @Test("A probe answered with 429 pauses everybody again until the new Retry-After, then one new probe")
    func probeRateLimitedAgain() async throws {
        let clock = ManualClock()
        let gate = UploadGate(clock: clock)
        gate.finished(try await gate.acquire(), rateLimited: .some(.seconds(10)))
        try await withThrowingTaskGroup(of: Permit.self) { group in
            for _ in 0..<2 { group.addTask { try await gate.acquire() } }
            await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(10))
            let probe = try #require(try await group.next())
            #expect(probe.isProbe)
            await Self.waitUntil { gate.waitingForProbeCount == 1 }
            gate.finished(probe, rateLimited: .some(.seconds(20)))
            await clock.waitForSleepers(count: 1)
            #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(30)))
            clock.advance(by: .seconds(20))
            let second = try #require(try await group.next())
            #expect(second.isProbe)
        }
        #expect(gate.rateLimitedCount == 2)
    }

    @Test("Retry-After as an HTTP date is read against the wall clock and waited out on the injected clock")
    func httpDate() async throws {
        let clock = ManualClock()
        let wallClock = Date(timeIntervalSince1970: 1_700_000_000)
        let gate = UploadGate(clock: clock, now: { wallClock })
        let retryAfter = try #require(RetryAfter(headerValue: HTTPDate.format(wallClock.addingTimeInterval(45))))
        gate.finished(try await gate.acquire(), rateLimited: .some(retryAfter))
        async let permit = gate.acquire()
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(45)))
        clock.advance(by: .seconds(45))
        #expect(try await permit.isProbe)
    }

    @Test("A 429 without Retry-After pauses for the default second; a date in the past not at all")
    func missingOrPastRetryAfter() async throws {
        let clock = ManualClock()
        let wallClock = Date(timeIntervalSince1970: 1_700_000_000)
        let gate = UploadGate(clock: clock, now: { wallClock })
        gate.finished(try await gate.acquire(), rateLimited: .some(nil))
        async let permit = gate.acquire()
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(1)))
        clock.advance(by: .seconds(1))
        let probe = try await permit
        #expect(probe.isProbe)
        gate.finished(probe, rateLimited: .some(.date(wallClock.addingTimeInterval(-60))))
        #expect(try await gate.acquire().isProbe)   // at once, no sleep
    }

    @Test("A pause longer than the longest wait fails the upload at once, naming the wait")
    func tooLong() async throws {
        let wallClock = Date(timeIntervalSince1970: 1_700_000_000)
        let gate = UploadGate(clock: ManualClock(), longestWait: .seconds(900), now: { wallClock })
        gate.finished(try await gate.acquire(), rateLimited: .some(.seconds(3600)))
        let until = HTTPDate.format(wallClock.addingTimeInterval(3600))
        await #expect(throws: ScanFailure.rateLimitedTooLong(
            "it asked to wait 3600.0 seconds (until \(until)), longer than 900.0 seconds")) {
            _ = try await gate.acquire()
        }
    }

    @Test("An upload cancelled while it waits for the probe leaves the gate and throws CancellationError")
    func cancelledWhileWaitingForProbe() async throws {
        let clock = ManualClock()
        let gate = UploadGate(clock: clock)
        gate.finished(try await gate.acquire(), rateLimited: .some(.seconds(0)))
        let probe = try await gate.acquire()
        #expect(probe.isProbe)
        let waiter = Task { try await gate.acquire() }
        await Self.waitUntil { gate.waitingForProbeCount == 1 }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiter.value }
        #expect(gate.waitingForProbeCount == 0)
        gate.finished(probe, rateLimited: nil)
        #expect(try await !gate.acquire().isProbe)
    }
}
