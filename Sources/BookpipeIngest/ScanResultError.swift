/// A problem with a whole scan result file: nothing is imported from it.
///
/// A problem with one scan (a `scanId` that is a number, `books` that is an object) or one
/// detection is not a ``ScanResultError``: it becomes a ``RejectedRow`` or a finding on the
/// record, and the rest of the file still imports.
public enum ScanResultError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file could not be opened.
    case cannotOpen(file: String, reason: String)
    /// Reading the file failed part way.
    case readFailed(file: String, reason: String)
    /// The file holds no bytes, or only white space.
    case emptyFile(file: String)
    /// The file is larger than a scan result can sensibly be.
    case tooLarge(file: String, size: Int, limit: Int)
    /// The file is not UTF-8 text; the position of the first bad byte.
    case notUTF8(file: String, line: Int, column: Int)
    /// The file is not valid JSON (cut off, a missing comma, …); where and what.
    case invalidJSON(file: String, line: Int, column: Int, reason: String)
    /// The JSON is valid but is neither a list of detections nor a scan envelope.
    case unknownShape(file: String, found: String)
    /// The envelope's `format` or `version` is not one bookpipe reads.
    case unsupportedEnvelope(file: String, line: Int, column: Int, reason: String)

    /// The file the error is about, as given.
    public var file: String {
        switch self {
        case .cannotOpen(let file, _), .readFailed(let file, _), .emptyFile(let file), .tooLarge(let file, _, _),
            .notUTF8(let file, _, _), .invalidJSON(let file, _, _, _), .unknownShape(let file, _),
            .unsupportedEnvelope(let file, _, _, _):
            return file
        }
    }

    /// The 1-based line the problem is on, when it has one.
    public var line: Int? {
        switch self {
        case .notUTF8(_, let line, _), .invalidJSON(_, let line, _, _), .unsupportedEnvelope(_, let line, _, _): line
        default: nil
        }
    }

    /// The 1-based column (in characters) the problem is at, when it has one.
    public var column: Int? {
        switch self {
        case .notUTF8(_, _, let column), .invalidJSON(_, _, let column, _), .unsupportedEnvelope(_, _, let column, _): column
        default: nil
        }
    }

    private static let nothingImported = "Nothing was imported from this file."

    /// The message for people: where, what, and what to do next.
    public var description: String {
        switch self {
        case .cannotOpen(let file, let reason):
            return "\(file): cannot open the file (\(reason)). Check the path and that you may read the file."
        case .readFailed(let file, let reason):
            return "\(file): reading the file failed (\(reason)). Check the disk and run the import again."
        case .emptyFile(let file):
            return "\(file) is empty: there is nothing to import. Save the scan result again; it is a JSON list or "
                + "a {\"format\": \"bookshelf-scan\", …} object."
        case .tooLarge(let file, let size, let limit):
            return "\(file) is \(size) bytes, more than the \(limit) bytes a scan result may have. "
                + Self.nothingImported + " Split it into one file per scan."
        case .notUTF8(let file, let line, let column):
            return "\(file):\(line):\(column): the file is not UTF-8 text (an invalid byte here). "
                + Self.nothingImported + " Save the scan result as UTF-8 JSON."
        case .invalidJSON(let file, let line, let column, let reason):
            return "\(file):\(line):\(column): not valid JSON: \(reason). " + Self.nothingImported
                + " Fix the file (or save the scan result again) and run the import again."
        case .unknownShape(let file, let found):
            return "\(file): not a scan result: the file holds \(found). " + Self.nothingImported
                + " A scan result is a JSON list of detections ({\"title\", \"author\", \"confidence\", \"boundingBox\"}), "
                + "or {\"format\": \"bookshelf-scan\", \"version\": 1, \"scans\": [...]}; see samples/shelf-scan."
        case .unsupportedEnvelope(let file, let line, let column, let reason):
            return "\(file):\(line):\(column): \(reason). " + Self.nothingImported
                + " bookpipe reads {\"format\": \"bookshelf-scan\", \"version\": 1}; see samples/shelf-scan."
        }
    }
}
