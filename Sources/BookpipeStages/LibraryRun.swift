import BookpipePipeline
import BookpipeLibrary
import Synchronization

/// The run's entry in the library (`runs` table), shared by the steps that write to the library:
/// the first of them to write begins it, and each one's ``Stage/end(_:in:)`` records how the run
/// ended (the first outcome recorded wins). A pipeline that writes nothing records no run.
///
/// A run resource of the pipeline (``StageContext/resource(_:)``); commands create one per run.
public final class LibraryRun: Sendable {
    private enum Phase {
        case notBegun
        case beginning([CheckedContinuation<Int64?, Never>])
        case begun(Int64)
        case ended(Int64)
    }

    /// The command line as typed, stored with the run.
    public let command: String
    private let phase = Mutex(Phase.notBegun)

    /// Creates the run's entry (nothing is written until a step writes).
    public init(command: String) {
        self.command = command
    }

    /// The run's id, beginning the run in `store` on first use (callers arriving meanwhile wait
    /// for the same id).
    /// - Throws: ``StoreError`` when the run cannot be recorded.
    public func id(in store: any Library, pipeline: String) async throws -> Int64 {
        enum Action { case have(Int64), begin, wait }
        let action = phase.withLock { phase -> Action in
            switch phase {
            case .begun(let id), .ended(let id): return .have(id)
            case .beginning: return .wait
            case .notBegun:
                phase = .beginning([])
                return .begin
            }
        }
        switch action {
        case .have(let id):
            return id
        case .begin:
            do {
                let id = try await store.beginRun(command: command, pipeline: pipeline)
                resumeWaiters(with: id, next: .begun(id))
                return id
            } catch {
                resumeWaiters(with: nil, next: .notBegun)
                throw error
            }
        case .wait:
            let id = await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
                let resumeWith = phase.withLock { phase -> Int64?? in
                    switch phase {
                    case .beginning(let waiters):
                        phase = .beginning(waiters + [continuation])
                        return nil
                    case .begun(let id), .ended(let id): return .some(id)
                    case .notBegun: return .some(nil)
                    }
                }
                if let resumeWith { continuation.resume(returning: resumeWith) }
            }
            guard let id else { throw StoreError.writeFailed(path: store.location, what: "run", reason: "the run could not be recorded") }
            return id
        }
    }

    private func resumeWaiters(with id: Int64?, next: Phase) {
        let waiters = phase.withLock { phase -> [CheckedContinuation<Int64?, Never>] in
            defer { phase = next }
            if case .beginning(let waiters) = phase { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume(returning: id) }
    }

    /// The run's id when it has begun.
    public var currentID: Int64? {
        phase.withLock { phase in
            switch phase {
            case .begun(let id), .ended(let id): return id
            default: return nil
            }
        }
    }

    /// Records how the run ended (once; later calls do nothing).
    public func end(_ outcome: RunOutcome, in store: any Library) async {
        let id = phase.withLock { phase -> Int64? in
            guard case .begun(let id) = phase else { return nil }
            phase = .ended(id)
            return id
        }
        guard let id else { return }
        let status: RunStatus
        switch outcome {
        case .finished: status = .finished
        case .cancelled: status = .interrupted
        case .failed: status = .failed
        }
        try? await store.finishRun(id, status: status, summary: nil)
    }
}
