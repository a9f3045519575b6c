import Foundation

/// Serves until SIGTERM or SIGINT, then runs `stop` (print the counts, stop the server) and exits 0.
func serveUntilStopped(_ stop: @escaping @Sendable () -> Void) -> Never {
    signal(SIGTERM, SIG_IGN)
    signal(SIGINT, SIG_IGN)
    let stopSignals = [SIGTERM, SIGINT].map { number in
        let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
        source.setEventHandler {
            stop()
            exit(0)
        }
        source.resume()
        return source
    }
    withExtendedLifetime(stopSignals) { dispatchMain() }
}
