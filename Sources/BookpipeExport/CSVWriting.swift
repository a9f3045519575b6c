import Foundation

/// CSV output that spreadsheet programs cannot turn into formulas: every CSV bookpipe writes
/// (the export contract's `csv` layout, the app's `wingtip` layout, rejected rows and the report's
/// problem rows) goes through here.
package enum CSVWriting {
    /// A cell starting with = + - @ (or a tab / carriage return) is prefixed with `'` so Excel and
    /// LibreOffice show it as text instead of running it; the library keeps the original.
    package static func neutralized(_ cell: String) -> String {
        guard let first = cell.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return cell }
        return "'" + cell
    }

    /// The cell neutralised, then quoted when it holds a comma, a quote or a line break (quotes
    /// doubled), as RFC 4180 says.
    package static func quoted(_ cell: String) -> String {
        let safe = neutralized(cell)
        if safe.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return safe
    }

    /// One CSV line: the cells quoted where needed, comma-separated, ending in CRLF.
    package static func line(_ cells: [String]) -> String {
        cells.map(quoted).joined(separator: ",") + "\r\n"
    }
}
