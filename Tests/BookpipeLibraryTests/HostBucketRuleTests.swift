import BookpipeLibrary
import Testing

@Suite struct HostBucketRuleTests {
    @Test("A new bucket is full: its burst goes at once, then each token waits its share of a second")
    func burstThenRate() {
        var tokens: Double?
        var grants: [Double] = []
        for _ in 0..<3 {
            let take = HostBucketRule.take(tokens: tokens, updatedAt: 100, pausedUntil: nil, now: 100, rate: 4, burst: 2)
            tokens = take.tokens
            grants.append(take.wait)
        }
        #expect(grants == [0, 0, 0.25])
        // Half a token refilled after 0.125 s: the rest of the quarter second is left to wait.
        let later = HostBucketRule.take(tokens: tokens, updatedAt: 100, pausedUntil: nil, now: 100.125, rate: 4, burst: 2)
        #expect(later.wait == 0.125)
        #expect(HostBucketRule.take(tokens: 0, updatedAt: 100, pausedUntil: nil, now: 100.25, rate: 4, burst: 2).wait == 0)
    }

    @Test("Tokens never exceed the burst, however long the bucket rested")
    func burstCaps() {
        let rested = HostBucketRule.take(tokens: 0, updatedAt: 0, pausedUntil: nil, now: 10_000, rate: 3, burst: 1)
        #expect(rested == HostBucketRule.Take(tokens: 0, wait: 0))
    }

    @Test("A pause makes everyone wait until it ends, whatever the tokens; a clock behind the stored time refills nothing")
    func pauseAndClockBehind() {
        #expect(HostBucketRule.take(tokens: 1, updatedAt: 100, pausedUntil: 160, now: 130, rate: 3, burst: 1).wait == 30)
        #expect(HostBucketRule.take(tokens: 1, updatedAt: 100, pausedUntil: 90, now: 130, rate: 3, burst: 1).wait == 0)
        #expect(HostBucketRule.take(tokens: 0, updatedAt: 200, pausedUntil: nil, now: 100, rate: 2, burst: 1).wait == 0.5)
    }
}
