import BookpipeCore

/// The rows an import rejected, written for people (one line each: `file:line[:column]: reason`)
/// or as CSV for a spreadsheet (`bookpipe rejected --csv`).
///
/// CSV columns, in order: `file`, `line` (1-based physical line), `row` (1-based data row, empty
/// when unknown), `column` (empty when the whole row is at fault), `reason`, `rawText` (the row as
/// read, cut at ``RejectedRow/rawTextLimit`` characters). CRLF line ends; cells that a spreadsheet
/// would run as formulas are neutralised, like every CSV bookpipe writes.
///
/// ```swift
/// var text = ""
/// RejectedRowsExport.writeCSV(try store.rejections(), to: &text)
/// ```
public enum RejectedRowsExport {
    /// The CSV layout's columns, in order.
    public static let csvHeader = ["file", "line", "row", "column", "reason", "rawText"]

    /// Writes the header and one CSV line per rejected row, in the order given.
    ///
    /// - Parameters:
    ///   - rows: The rejected rows (``LibraryRecordStore/rejections()`` gives them in file and line order).
    ///   - output: Where the text goes.
    public static func writeCSV(_ rows: [RejectedRow], to output: inout some TextOutputStream) {
        output.write(CSVWriting.line(csvHeader))
        for row in rows {
            output.write(CSVWriting.line([row.file, String(row.line), row.row.map(String.init) ?? "",
                                          row.column.map(String.init) ?? "", row.reason, row.rawText]))
        }
    }

    /// Writes one line per rejected row, `file:line[:column]: reason`, in the order given.
    public static func writeText(_ rows: [RejectedRow], to output: inout some TextOutputStream) {
        // A reason may quote the row: its control characters are shown as escapes, never acted on.
        for row in rows { output.write(TerminalText.inert("\(row.location): \(row.reason)") + "\n") }
    }
}
