import BookpipeCore
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who holds claims on records: one run of one process, on one host.
///
/// A run takes the records it works on with a lease (``LibraryClaims/claimRecords(_:owner:lease:limit:)``);
/// another run on the same library — in this process, another process, or on another machine —
/// skips records a live claim holds. A run that dies leaves claims that stop being live when
/// their lease runs out, or at once when the owner is a process of this host that no longer runs
/// (a `kill -9`, a crash): then the records are taken again. Completion is fenced by the owner's
/// id: a run whose claim was taken over writes nothing for those records.
public struct ClaimOwner: Sendable, Hashable, Codable {
    /// Unique per run: `<host>:<pid>:<random>`.
    public var id: String
    /// The host the run works on.
    public var host: String
    /// Its process id.
    public var processID: Int32
    /// What it runs (the command line, for messages).
    public var command: String
    /// When it started.
    public var startedAt: Date

    /// Creates an owner.
    public init(id: String, host: String, processID: Int32, command: String, startedAt: Date) {
        self.id = id
        self.host = host
        self.processID = processID
        self.command = command
        self.startedAt = startedAt
    }

    /// A new owner for a run of this process.
    public static func thisProcess(command: String, at time: Date = Date()) -> ClaimOwner {
        let host = ProcessInfo.processInfo.hostName
        let pid = getpid()
        let random = UInt64.random(in: 0...UInt64.max)
        return ClaimOwner(id: "\(host):\(pid):\(String(random, radix: 16))", host: host, processID: pid,
                          command: command, startedAt: time)
    }

    /// True when the owner is a process of this host that no longer runs: its claims are dead
    /// whatever their lease says. (Another host's process cannot be checked: its lease decides.)
    public var isGoneFromThisHost: Bool {
        guard host == ProcessInfo.processInfo.hostName, processID > 0 else { return false }
        if processID == getpid() { return false }
        return kill(processID, 0) != 0 && errno == ESRCH
    }

    /// Whether claims of this owner with a lease ending at `leaseUntil` are live at `now`.
    public func holdsLease(until leaseUntil: Date, now: Date) -> Bool {
        leaseUntil > now && !isGoneFromThisHost
    }
}

/// A run holding claims, and how many records it holds.
public struct ClaimHolder: Sendable, Hashable {
    /// The run.
    public var owner: ClaimOwner
    /// How many records it holds.
    public var records: Int
    /// When its lease ends (unless renewed).
    public var leaseUntil: Date

    /// Creates a holder.
    public init(owner: ClaimOwner, records: Int, leaseUntil: Date) {
        self.owner = owner
        self.records = records
        self.leaseUntil = leaseUntil
    }

    /// "1,501 rows are being enriched by another run (pid 4242 on host, since 02:00)".
    public var description: String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        let whereRuns = owner.host == ProcessInfo.processInfo.hostName ? "pid \(owner.processID)"
            : "pid \(owner.processID) on \(owner.host)"
        return "\(CountText.number(records)) row\(records == 1 ? " is" : "s are") being enriched by another run "
            + "(\(whereRuns), since \(formatter.string(from: owner.startedAt)))"
    }
}

/// What a claim took.
public struct RecordClaim: Sendable, Hashable {
    /// The ids claimed for the owner, in the order to work them.
    public var ids: [String]
    /// Other live runs holding records the selection names; empty for a batch claim that took
    /// all it asked for (only a claim that comes back short counts them).
    public var heldElsewhere: [ClaimHolder]

    /// Creates a claim's result.
    public init(ids: [String], heldElsewhere: [ClaimHolder]) {
        self.ids = ids
        self.heldElsewhere = heldElsewhere
    }

    /// How many records of the selection other runs hold.
    public var heldElsewhereCount: Int { heldElsewhere.reduce(0) { $0 + $1.records } }
}

/// Numbers as people read them: thousands grouped with commas.
public enum CountText {
    /// `1501` → `1,501`.
    public static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// A count with its noun in the right number: `counted(1, "record")` → `1 record`,
    /// `counted(1501, "entry", "entries")` → `1,501 entries`.
    public static func counted(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(number(value)) \(value == 1 ? singular : plural ?? singular + "s")"
    }
}
