import Foundation

/// Turns SIGINT and SIGTERM into cancellation of one task (the run's root task).
final class SignalCancellation: @unchecked Sendable {
    // Only touched on `queue` (the dispatch sources' queue) and in init/deinit.
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "bookpipe.signals")
    private let received = NSLock()
    private var signalNumber: Int32?

    init(onSignal: @escaping @Sendable () -> Void) {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in
                self?.received.lock()
                let isFirst = self?.signalNumber == nil
                self?.signalNumber = number
                self?.received.unlock()
                if isFirst {
                    onSignal()
                } else {
                    // A second Ctrl-C: stop at once. Committed batches are safe; the rerun resumes.
                    exit(130)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal received, if any.
    var receivedSignal: Int32? {
        received.lock()
        defer { received.unlock() }
        return signalNumber
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
