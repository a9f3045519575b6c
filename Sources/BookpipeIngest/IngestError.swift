/// A problem with a whole input file: it cannot be opened, read or understood.
///
/// A problem with one row is not an ``IngestError``: it becomes a ``RejectedRow`` or a finding on
/// the record, and the rest of the file still imports.
public enum IngestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be opened.
    case cannotOpen(file: String, reason: String)
    /// Reading the file failed part way.
    case readFailed(file: String, reason: String)
    /// The file has no bytes (or only a byte-order mark and blank lines).
    case emptyFile(file: String)
    /// The file is not text (NUL bytes or control characters near the start).
    case notText(file: String, reason: String)
    /// No known format matches the header and no title column could be guessed.
    case unknownFormat(file: String, headers: [String], delimiter: UInt8)
    /// `--format` named a format bookpipe does not know.
    case unknownFormatName(file: String, name: String)
    /// The forced format needs columns the header does not have.
    case missingColumns(file: String, format: String, missing: [String], headers: [String])
    /// `--map` named a field bookpipe does not know.
    case unknownMapField(file: String, field: String)
    /// `--map` named a header the file does not have.
    case mappedColumnNotFound(file: String, field: String, header: String, headers: [String])
    /// `--key` names a column the file does not have.
    case keyColumnNotFound(file: String, header: String, headers: [String])
    /// The header row itself cannot be used.
    case badHeader(file: String, line: Int, reason: String)
    /// The first row holds values (numbers, ISBNs, dates), not column names: the file has no header.
    case headerLooksLikeData(file: String, firstRow: [String])

    /// The file the error is about, as given.
    public var file: String {
        switch self {
        case .cannotOpen(let file, _), .readFailed(let file, _), .emptyFile(let file), .notText(let file, _),
            .unknownFormat(let file, _, _), .unknownFormatName(let file, _), .missingColumns(let file, _, _, _),
            .unknownMapField(let file, _), .mappedColumnNotFound(let file, _, _, _), .keyColumnNotFound(let file, _, _), .badHeader(let file, _, _),
            .headerLooksLikeData(let file, _):
            return file
        }
    }

    /// The message for people: where, what, and what to do next.
    public var description: String {
        switch self {
        case .cannotOpen(let file, let reason):
            return "\(file): cannot open the file (\(reason)). Check the path and that you may read the file."
        case .readFailed(let file, let reason):
            return "\(file): reading the file failed (\(reason)). Check the disk and run the import again."
        case .emptyFile(let file):
            return "\(file) is empty: there is nothing to import. Export the list again; an export starts with a header row."
        case .notText(let file, let reason):
            return "\(file) is not a text file (\(reason)). bookpipe reads CSV and TSV exports; export the list again as CSV."
        case .unknownFormat(let file, let headers, let delimiter):
            let title = headers.first ?? "<header>"
            let author = headers.count > 1 ? headers[1] : "<header>"
            return "\(file): cannot tell which columns hold the title and the author. "
                + "Headers found (\(Self.delimiterName(delimiter))-separated): \(Self.list(headers)). "
                + "Name the columns with --map, for example: --map title=\(title),author=\(author) "
                + "(and --delimiter if \(Self.delimiterName(delimiter)) is not the separator)."
        case .unknownFormatName(let file, let name):
            return "\(file): unknown format \"\(name)\". Known formats: "
                + DetectedFormat.knownNames.joined(separator: ", ") + "."
        case .missingColumns(let file, let format, let missing, let headers):
            return "\(file): the \(format) format needs the column\(missing.count == 1 ? "" : "s") \(Self.list(missing)), "
                + "which the header does not have. Headers found: \(Self.list(headers)). "
                + "Leave out --format to detect the format, or name the columns with --map."
        case .unknownMapField(let file, let field):
            return "\(file): --map names an unknown field \"\(field)\". Known fields: "
                + ImportOptions.mappableFields.joined(separator: ", ") + "."
        case .mappedColumnNotFound(let file, let field, let header, let headers):
            return "\(file): --map \(field)=\(header): the file has no column \"\(header)\". "
                + "Headers found: \(Self.list(headers))."
        case .keyColumnNotFound(let file, let header, let headers):
            return "\(file): --key \(header): the file has no column \"\(header)\". "
                + "Headers found: \(Self.list(headers))."
        case .badHeader(let file, let line, let reason):
            return "\(file):\(line): the header row \(reason). Fix the header row and run the import again."
        case .headerLooksLikeData(let file, let firstRow):
            return "\(file): the first row looks like data, not a header naming the columns (it starts "
                + Self.list(Array(firstRow.prefix(4))) + (firstRow.count > 4 ? ", …" : "") + "), "
                + "so bookpipe cannot tell which column holds what. Export the list again with its header row, "
                + "or add a first line naming the \(firstRow.count) columns (for example Title and Author) "
                + "and import again."
        }
    }

    /// A person's name for a delimiter byte.
    static func delimiterName(_ delimiter: UInt8) -> String {
        switch delimiter {
        case UInt8(ascii: ","): "comma"
        case UInt8(ascii: "\t"): "tab"
        case UInt8(ascii: ";"): "semicolon"
        case UInt8(ascii: "|"): "pipe"
        default: "'\(Character(Unicode.Scalar(delimiter)))'"
        }
    }

    /// Quoted, comma-separated, at most 40 items.
    static func list(_ items: [String]) -> String {
        let shown = items.prefix(40).map { "\"\($0)\"" }.joined(separator: ", ")
        return items.count > 40 ? shown + ", … (\(items.count) in all)" : shown
    }
}
