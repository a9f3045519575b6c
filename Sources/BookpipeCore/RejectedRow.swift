/// A row of an input file that could not be read as a record, with where it is and why.
///
/// The reader produces these and the library stores them (one type for both). A rejected row
/// still uses up its data-row number, so record ids stay stable.
public struct RejectedRow: Sendable, Hashable, Codable {
    /// The input file's content fingerprint (the first half of its record ids).
    public var fileHash: String
    /// The input file's path as given.
    public var file: String
    /// The 1-based physical line where the row starts.
    public var line: Int
    /// The 1-based data row, when the row could be counted as one.
    public var row: Int?
    /// The 1-based column (field number) the problem is in, when one.
    public var column: Int?
    /// What is wrong and what happened, for people (for example
    /// `unclosed quote starting at line 5, column 2`).
    public var reason: String
    /// The row's text as in the file, cut to at most ``RejectedRow/rawTextLimit`` bytes.
    public var rawText: String

    /// The most bytes of a rejected row's text that are kept.
    public static let rawTextLimit = 2000

    /// Creates a rejected row.
    public init(fileHash: String, file: String, line: Int, row: Int?, column: Int?, reason: String, rawText: String) {
        self.fileHash = fileHash
        self.file = file
        self.line = line
        self.row = row
        self.column = column
        self.reason = reason
        self.rawText = rawText
    }

    /// `file:line[:column]`, the way compilers point at a place.
    public var location: String {
        column.map { "\(file):\(line):\($0)" } ?? "\(file):\(line)"
    }
}
