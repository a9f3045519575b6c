import Foundation

/// The layouts a library is exported in (DESIGN.md §6).
///
/// `json`, `jsonl` and `csv` follow the export contract: one entry per source row or scan
/// detection, under keys that are never renamed. `wingtip` is the book-tracking app's own CSV
/// layout, one row per book.
public enum ExportFormat: String, Sendable, Hashable, CaseIterable {
    /// A JSON array of the contract's objects, one per line after the opening `[`.
    case json
    /// JSON lines: one contract object per line.
    case jsonl
    /// CSV of the contract's main fields (cells that a spreadsheet would run as formulas are neutralised).
    case csv
    /// The app's `wingtip_library_<yyyy-MM-dd>.csv` layout: one row per book.
    case wingtip

    /// The file an export in this format is written to when no output is named.
    ///
    /// - Parameter date: The day of the export (its UTC day is used).
    /// - Returns: `wingtip_library_<yyyy-MM-dd>.csv` for ``wingtip`` (the name the app gives its own
    ///   exports); nil for the others, which go to standard output.
    public func defaultFileName(on date: Date) -> String? {
        self == .wingtip ? WingtipExport.fileName(on: date) : nil
    }
}
