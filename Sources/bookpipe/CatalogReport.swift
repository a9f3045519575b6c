import BookpipeCatalog
import Synchronization
import BookpipeEnrichment
import Foundation

/// The texts `bookpipe catalog` prints.
enum CatalogReport {
    /// How many skipped lines an import summary lists one by one.
    static let problemsListed = 20

    static func summary(_ summary: CatalogImportSummary) -> String {
        let seconds = seconds(summary.duration)
        var head = "\(summary.file): \(number(summary.lines)) lines"
        if seconds > 0 {
            head += " in \(String(format: "%.1f", seconds)) s (\(number(Int(Double(summary.lines) / max(seconds, 0.001)))) lines/s)"
        }
        var kinds = ["\(number(summary.editions)) editions", "\(number(summary.works)) works", "\(number(summary.authors)) authors"]
        if summary.removals > 0 { kinds.append("\(number(summary.removals)) deletes/redirects") }
        if summary.otherTypes > 0 { kinds.append("\(number(summary.otherTypes)) lines of other types ignored") }
        var lines = [
            head + ": " + kinds.joined(separator: ", "),
            "  \(number(summary.changed)) records stored or replaced, \(number(summary.unchanged)) unchanged, "
                + "\(number(summary.skipped)) lines skipped; \(number(summary.searchUnitsRebuilt)) works/editions re-indexed",
        ]
        if summary.invalidISBNs > 0 {
            lines.append("  \(number(summary.invalidISBNs)) invalid ISBNs not stored (their editions are)")
        }
        if summary.skipped > 0 {
            let reasons = summary.skippedByReason.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key.rawValue < $1.key.rawValue) }
                .map { "\(number($0.value)) \($0.key)" }
            lines.append("  skipped: " + reasons.joined(separator: ", "))
            for problem in summary.problems.prefix(problemsListed) { lines.append("  \(problem)") }
            if summary.skipped > problemsListed {
                lines.append("  … and \(number(summary.skipped - min(problemsListed, summary.problems.count))) more")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func totals(_ counts: CatalogCounts, path: String) -> String {
        var text = "catalogue \(path): \(number(counts.editions)) editions, \(number(counts.works)) works, "
            + "\(number(counts.authors)) authors, \(number(counts.isbn13s)) ISBN-13s, \(number(counts.searchDocuments)) search entries"
        if counts.pendingSearchUnits > 0 {
            text += "\n  \(number(counts.pendingSearchUnits)) works/editions wait to be re-indexed: import again to finish"
        }
        return text
    }

    static func stats(_ counts: CatalogCounts, path: String) -> String {
        var lines = [
            "catalogue \(path)",
            "  editions        \(number(counts.editions))",
            "  works           \(number(counts.works))",
            "  authors         \(number(counts.authors))",
            "  ISBN-13s        \(number(counts.isbn13s))",
            "  search entries  \(number(counts.searchDocuments))",
            "  imports         \(number(counts.imports))" + (counts.lastImportAt.map { " (last finished \($0))" } ?? ""),
        ]
        if counts.pendingSearchUnits > 0 {
            lines.append("  \(number(counts.pendingSearchUnits)) works/editions wait to be re-indexed (an import was interrupted): "
                         + "run `bookpipe catalog import` again")
        }
        return lines.joined(separator: "\n")
    }

    /// One answer of the catalogue source, candidates one per line.
    static func describe(_ answer: LookupAnswer) -> String {
        switch answer {
        case .notFound:
            return "not found"
        case .failed(let reason):
            return "failed: \(reason)"
        case .found(let candidates):
            return "\(candidates.count) found" + candidates.map { candidate in
                var line = "\n  \(candidate.identity)"
                if let edition = candidate.editionKey { line += " \(edition)" }
                line += "  \(candidate.title)"
                if !candidate.authors.isEmpty { line += " — " + candidate.authors.joined(separator: ", ") }
                if let year = candidate.year { line += " (\(year))" }
                return line
            }.joined()
        }
    }

    static func number(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Shows import progress on standard error: one redrawn line on a terminal, JSON lines for
/// programs, or nothing. Used by one import at a time, on the thread that runs it.
final class CatalogProgressPrinter: Sendable {

    private struct Drawing {
        var lastDraw = ContinuousClock.now - .seconds(1)
        var drewLine = false
    }

    private let style: ProgressMode.Style
    private let started = ContinuousClock.now
    private let drawing = Mutex(Drawing())

    init(mode: ProgressMode) {
        style = mode.style
    }

    func show(_ progress: CatalogImportProgress) {
        guard style != .none else { return }
        let now = ContinuousClock.now
        let isDue = drawing.withLock { drawing -> Bool in
            guard now - drawing.lastDraw >= .milliseconds(style == .json ? 500 : 200) else { return false }
            drawing.lastDraw = now
            return true
        }
        guard isDue else { return }
        let elapsed = CatalogReport.seconds(now - started)
        switch style {
        case .json:
            var object: [String: Any] = ["event": "catalogProgress", "file": progress.file, "phase": progress.phase.rawValue,
                                         "lines": progress.lines, "bytesRead": progress.bytesRead,
                                         "searchUnitsRebuilt": progress.searchUnitsRebuilt,
                                         "searchUnitsPending": progress.searchUnitsPending]
            if let total = progress.totalBytes { object["totalBytes"] = total }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                FileHandle.standardError.write(data + Data("\n".utf8))
            }
        case .bar:
            var text: String
            switch progress.phase {
            case .reading:
                text = "\(progress.file): \(CatalogReport.number(progress.lines)) lines"
                if elapsed > 0 { text += ", \(CatalogReport.number(Int(Double(progress.lines) / elapsed))) lines/s" }
                if let total = progress.totalBytes, total > 0 {
                    let fraction = Double(progress.bytesRead) / Double(total)
                    text += String(format: ", %.0f%%", fraction * 100)
                    if fraction > 0.01 { text += String(format: ", about %.0f s left", elapsed * (1 - fraction) / fraction) }
                }
            case .indexing:
                text = "\(progress.file): re-indexing \(CatalogReport.number(progress.searchUnitsRebuilt)) of "
                    + "\(CatalogReport.number(progress.searchUnitsRebuilt + progress.searchUnitsPending)) works/editions"
            }
            FileHandle.standardError.write(Data(("\r\u{1B}[K" + text).utf8))
            drawing.withLock { $0.drewLine = true }
        case .none:
            break
        }
    }

    func finish() {
        if drawing.withLock({ $0.drewLine }) { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
