import BookpipePipeline
import Foundation
import Synchronization

/// Draws progress on standard error: a bar with rows/s and ETA on a terminal, JSON lines for
/// programs, or nothing.
final class ProgressDisplay: ProgressSink {

    private struct State {
        var lastDraw = ContinuousClock.now - .seconds(1)
        var stored = 0
        var drewBar = false
        /// When the first enrichment event came (the enrichment's pace is measured from there).
        var enrichmentStarted: ContinuousClock.Instant?
    }

    let style: ProgressMode.Style
    private let state = Mutex(State())
    private let started = ContinuousClock.now

    init(mode: ProgressMode) {
        style = mode.style
    }

    func emit(_ event: ProgressEvent) {
        switch event {
        case .message(let text):
            clearBar()
            if style == .json {
                writeJSON(["event": "message", "message": text])
            } else {
                printError(text)
            }
        case .inputStarted(let file, let totalBytes):
            if style == .json { writeJSON(["event": "inputStarted", "file": file, "totalBytes": totalBytes]) }
        case .inputAdvanced(let file, let bytesRead, let totalBytes, let rowsRead):
            let now = ContinuousClock.now
            let shouldDraw = state.withLock { state -> Bool in
                guard now - state.lastDraw >= .milliseconds(style == .json ? 500 : 100) else { return false }
                state.lastDraw = now
                return true
            }
            guard shouldDraw else { return }
            let elapsed = Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18
            let rate = elapsed > 0 ? Double(rowsRead) / elapsed : 0
            let fraction = totalBytes > 0 ? Double(bytesRead) / Double(totalBytes) : 0
            let eta = fraction > 0.01 ? elapsed * (1 - fraction) / fraction : nil
            switch style {
            case .json:
                var object: [String: Any] = ["event": "progress", "file": file, "bytesRead": bytesRead,
                                             "totalBytes": totalBytes, "rowsRead": rowsRead, "rowsPerSecond": Int(rate)]
                if let eta { object["etaSeconds"] = Int(eta.rounded()) }
                writeJSON(object)
            case .bar:
                let width = 30
                let filled = Int(fraction * Double(width))
                let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                let etaText = eta.map { "ETA \(Self.clock($0))" } ?? "ETA --:--"
                let line = "\r[\(bar)] \(Int(fraction * 100))%  \(rowsRead) rows  \(Int(rate)) rows/s  \(etaText)  "
                state.withLock { $0.drewBar = true }
                FileHandle.standardError.write(Data(line.utf8))
            case .none: break
            }
        case .enrichmentAdvanced(let progress):
            drawEnrichment(progress)
        case .batchDone(let step, let records):
            if step == "store-records" { state.withLock { $0.stored += records } }
        case .photoStage(let photo, let stage, let progress):
            if style == .json {
                var object: [String: Any] = ["photo": photo, "stage": stage]
                object["progress"] = progress ?? NSNull()
                writeJSON(object)
            }
        case .scanAdvanced(let done, let total, let books):
            drawScan(done: done, total: total, books: books)
        }
    }

    /// The scan bar: photos done of all, books found, photos per minute, ETA.
    private func drawScan(done: Int, total: Int, books: Int) {
        guard style == .bar else { return }
        let now = ContinuousClock.now
        let elapsed = Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let fraction = total > 0 ? Double(done) / Double(total) : 0
        let eta = rate > 0 ? Double(max(0, total - done)) / rate : nil
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let etaText = eta.map { "ETA \(Self.clock($0))" } ?? "ETA --:--"
        let line = "\r[\(bar)] \(done)/\(total) photos  \(books) books  \(String(format: "%.1f", rate * 60)) photos/min  \(etaText)\u{1B}[K"
        state.withLock { $0.drewBar = true }
        FileHandle.standardError.write(Data(line.utf8))
    }

    private func drawEnrichment(_ progress: EnrichmentProgress) {
        let now = ContinuousClock.now
        let isLast = progress.rowsExpected.map { progress.rowsDone >= $0 } ?? false
        let (shouldDraw, enrichmentStarted) = state.withLock { state -> (Bool, ContinuousClock.Instant) in
            let first = state.enrichmentStarted ?? now
            state.enrichmentStarted = first
            guard isLast || now - state.lastDraw >= .milliseconds(style == .json ? 500 : 100) else { return (false, first) }
            state.lastDraw = now
            return (true, first)
        }
        guard shouldDraw else { return }
        let since = now - enrichmentStarted
        let elapsed = Double(since.components.seconds) + Double(since.components.attoseconds) / 1e18
        let rate = elapsed > 0 ? Double(progress.rowsDone) / elapsed : 0
        let eta = Self.enrichmentETA(done: progress.rowsDone, expected: progress.rowsExpected, elapsed: elapsed,
                                     planned: progress.expectedSeconds)
        switch style {
        case .json:
            var object: [String: Any] = ["event": "enrichment", "rowsDone": progress.rowsDone,
                                         "rowsPerSecond": (rate * 10).rounded() / 10]
            if let expected = progress.rowsExpected { object["rowsExpected"] = expected }
            if let eta { object["etaSeconds"] = Int(eta.rounded()) }
            object["sources"] = progress.sources.map { source -> [String: Any] in
                var entry: [String: Any] = ["name": source.name, "requests": source.requests, "cacheHits": source.cacheHits,
                                            "retries": source.retries, "rateLimited": source.rateLimited,
                                            "failures": source.failures]
                if let latency = source.meanLatencyMilliseconds { entry["meanLatencyMs"] = Int(latency.rounded()) }
                return entry
            }
            writeJSON(object)
        case .bar:
            let total = progress.rowsExpected.map { "/\($0)" } ?? ""
            let sources = progress.sources.map { source in
                "\(source.name) \(source.requests) req \(source.cacheHits) cached \(source.retries) retries "
                    + "\(source.rateLimited)×429" + (source.meanLatencyMilliseconds.map { " \(Int($0.rounded())) ms" } ?? "")
            }.joined(separator: " | ")
            let etaText = eta.map { "ETA \(Self.clock($0))" } ?? "ETA --:--"
            var bar = ""
            if let expected = progress.rowsExpected, expected > 0 {
                let width = 20
                let filled = min(width, progress.rowsDone * width / expected)
                bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            }
            let line = "\renriching \(bar)\(progress.rowsDone)\(total) rows  \(etaText)  \(sources)\u{1B}[K"
            state.withLock { $0.drewBar = true }
            FileHandle.standardError.write(Data(line.utf8))
        case .none: break
        }
    }

    /// The enrichment's time left: from the plan until 20 rows have finished (and the plan's time
    /// has not run out), then from the pace measured since the enrichment started.
    static func enrichmentETA(done: Int, expected: Int?, elapsed: Double, planned: Double?) -> Double? {
        guard let expected else { return nil }
        let left = Double(max(0, expected - done))
        if done < 20, let planned, planned > elapsed {
            return planned - elapsed
        }
        guard done > 0, elapsed > 0 else { return nil }
        return left / (Double(done) / elapsed)
    }

    /// Ends the bar's line so the next output starts on a fresh one.
    func clearBar() {
        let drew = state.withLock { state -> Bool in
            defer { state.drewBar = false }
            return state.drewBar
        }
        if drew { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    private func writeJSON(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        FileHandle.standardError.write(data + Data("\n".utf8))
    }

    private static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600 ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%02d:%02d", total / 60, total % 60)
    }
}
