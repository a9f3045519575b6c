import BookpipeLibrary

/// The review lines of an import's summary: how many wait and what to type next.
public enum ReviewSummary {
    /// - Parameters:
    ///   - store: the library the run worked on.
    ///   - libraryPath: how the person named it (for the `--library` of the command it suggests).
    ///   - whenEmpty: Whether an empty queue gets its line ("nothing needs review").
    public static func lines(store: any Library, libraryPath: String, whenEmpty: Bool = true) async -> [String] {
        let scans = (try? await store.reviewQueueCount(kind: .scan)) ?? 0
        let matches = (try? await store.reviewQueueCount(kind: .match)) ?? 0
        guard scans + matches > 0 else { return whenEmpty ? ["review: nothing needs review."] : [] }
        let library = ShellQuoting.libraryOption(libraryPath)
        var parts: [String] = []
        if scans > 0 { parts.append("\(scans) detection\(scans == 1 ? "" : "s") need\(scans == 1 ? "s" : "") review") }
        if matches > 0 { parts.append("\(matches) uncertain match\(matches == 1 ? "" : "es") need\(matches == 1 ? "s" : "") a choice") }
        let next = scans > 0 ? "verify ID, edit ID --title … --author …" : "choose ID N, choose ID --none"
        return ["review: \(parts.joined(separator: ", ")). Next: bookpipe review\(library)"
                + " (walks the queue; or bookpipe review list, then show ID, \(next))"]
    }
}
