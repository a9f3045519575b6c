import Synchronization

/// A bounded, multi-producer multi-consumer queue of batches that joins two stages.
///
/// `send` suspends while the buffer holds `capacity` batches (back-pressure: a fast reader waits
/// for slow enrichment, so memory stays bounded); `receive` suspends while it is empty and returns
/// nil once the channel is finished and drained.
///
/// Cancellation: a task cancelled while suspended in `send` or `receive` is resumed with
/// `CancellationError`; the batch it was sending is dropped (the run is being torn down, and
/// resumption relies on what the store committed, never on in-memory buffers).
public final class BatchChannel<Element: Sendable>: Sendable {
    private struct Waiter<Value> {
        let id: UInt64
        let continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var buffer: [Element] = []
        var isFinished = false
        var nextWaiterID: UInt64 = 0
        var senders: [(waiter: Waiter<Void>, element: Element)] = []
        var receivers: [Waiter<Element?>] = []
        var cancelledIDs: Set<UInt64> = []
    }

    private enum SendAction {
        case resumeNow, resumeReceiver(CheckedContinuation<Element?, any Error>), wait, cancelled
    }

    private enum ReceiveAction {
        case value(Element?, CheckedContinuation<Void, any Error>?)
        case wait, cancelled
    }

    private let capacity: Int
    private let state = Mutex(State())

    /// Creates a channel that buffers at most `capacity` batches (at least 1).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Sends one batch, suspending while the buffer is full.
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    public func send(_ element: Element) async throws {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action = state.withLock { state -> SendAction in
                    if state.cancelledIDs.remove(id) != nil { return .cancelled }
                    if !state.receivers.isEmpty {
                        let receiver = state.receivers.removeFirst()
                        return .resumeReceiver(receiver.continuation)
                    }
                    if state.buffer.count < capacity {
                        state.buffer.append(element)
                        return .resumeNow
                    }
                    state.senders.append((Waiter(id: id, continuation: continuation), element))
                    return .wait
                }
                switch action {
                case .resumeNow: continuation.resume()
                case .resumeReceiver(let receiver):
                    receiver.resume(returning: element)
                    continuation.resume()
                case .wait: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let index = state.senders.firstIndex(where: { $0.waiter.id == id }) {
                    return state.senders.remove(at: index).waiter.continuation
                }
                state.cancelledIDs.insert(id)
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
        state.withLock { _ = $0.cancelledIDs.remove(id) }
    }

    /// Receives the next batch, or nil once the channel is finished and empty.
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    public func receive() async throws -> Element? {
        try Task.checkCancellation()
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        let element = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let action = state.withLock { state -> ReceiveAction in
                    if state.cancelledIDs.remove(id) != nil { return .cancelled }
                    if !state.buffer.isEmpty {
                        let value = state.buffer.removeFirst()
                        if !state.senders.isEmpty {
                            let sender = state.senders.removeFirst()
                            state.buffer.append(sender.element)
                            return .value(value, sender.waiter.continuation)
                        }
                        return .value(value, nil)
                    }
                    if !state.senders.isEmpty {
                        let sender = state.senders.removeFirst()
                        return .value(sender.element, sender.waiter.continuation)
                    }
                    if state.isFinished { return .value(nil, nil) }
                    state.receivers.append(Waiter(id: id, continuation: continuation))
                    return .wait
                }
                switch action {
                case .value(let value, let sender):
                    sender?.resume()
                    continuation.resume(returning: value)
                case .wait: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
                if let index = state.receivers.firstIndex(where: { $0.id == id }) {
                    return state.receivers.remove(at: index).continuation
                }
                state.cancelledIDs.insert(id)
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
        state.withLock { _ = $0.cancelledIDs.remove(id) }
        return element
    }

    /// Marks the end of the stream: receivers drain what is buffered, then get nil.
    public func finish() {
        let receivers = state.withLock { state -> [Waiter<Element?>] in
            state.isFinished = true
            let waiting = state.receivers
            state.receivers.removeAll()
            return waiting
        }
        for receiver in receivers { receiver.continuation.resume(returning: nil) }
    }
}
