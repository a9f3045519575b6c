import BookpipeCore

/// Reads a CSV or TSV export as a stream of ``BookRecord`` batches, in bounded memory.
///
/// Opening the reader fingerprints the file (one pass of 1 MiB reads), reads the byte-order
/// mark, copies a UTF-16 file to a temporary UTF-8 file, sniffs the delimiter, parses the header
/// row with libcsv and detects the format (``format``). Each ``nextBatch(maxRecords:)`` call
/// then parses just enough of the file for one batch, so memory does not grow with file size.
///
/// Rows are never lost silently:
/// - a row with too few or too many fields is imported with a `row.short` / `row.long` finding
///   when it has a usable title, otherwise rejected;
/// - a quote that is never closed (the quoted field runs over line ends and leaves the row with
///   the wrong number of fields, or reaches the end of the file) rejects just that row, and
///   reading goes on at the line after the row's first line;
/// - a field over 1 MiB rejects its row; the parser's memory stays bounded;
/// - bytes that are not UTF-8 are read as Latin-1 (Windows-1252), noted on the record and
///   reported once per file.
///
/// Record ids are `<fileHash>:<row>`; a rejected row uses up its row number too, so the same file
/// always yields the same ids.
///
/// ```swift
/// let reader = try CSVRecordReader(path: "goodreads_library_export.csv", options: ImportOptions())
/// print(reader.format.description)              // Goodreads library export (31-column header)
/// while let batch = try reader.nextBatch(maxRecords: 500) {
///     store(batch.records); report(batch.rejected, batch.repairs)
/// }
/// ```
///
/// Not `Sendable`: one task owns a reader and calls it from start to end (which is also why the
/// exclusivity of its per-row state is not checked at run time).
public final class CSVRecordReader {
    /// The path as given.
    public let path: String
    /// The options the reader was opened with.
    public let options: ImportOptions
    /// The detected (or forced) format. Its ``DetectedFormat/encoding`` becomes `latin1-repaired`
    /// once a field with invalid UTF-8 was read, so read it again after the last batch for the
    /// final value.
    public private(set) var format: DetectedFormat
    /// A 128-bit fingerprint of the file's bytes, as 32 hex digits (``ContentFingerprint``; not
    /// cryptographic). It depends only on the content, not on the path.
    public let fileHash: String
    /// The file's size in bytes.
    public let totalBytes: Int
    /// How far the parser has got, in bytes of the original file (for progress).
    public var bytesRead: Int {
        textScale == 1 ? input.position : min(totalBytes, Int(Double(input.position) * textScale))
    }
    /// Data rows counted so far (imported, rejected or not), header excluded.
    public var rowsRead: Int { dataRow }

    /// The longest field accepted (1 MiB).
    public static let fieldLimit = 1 << 20
    /// The most fields a row may have.
    public static let maximumFields = 10_000
    /// Bytes handed to libcsv at a time when a line is longer.
    static let pieceLimit = 64 * 1024

    private let input: ChunkedInput
    private let collector: RowCollector
    private let parser: LibCSVParser
    private var builder: RecordBuilder
    private var width = 0
    private let textScale: Double

    @exclusivity(unchecked) private var line = 1
    @exclusivity(unchecked) private var pendingCR = false
    @exclusivity(unchecked) private var dataRow = 0
    @exclusivity(unchecked) private var finished = false

    @exclusivity(unchecked) private var rowInProgress = false
    @exclusivity(unchecked) private var rowStartLine = 1
    @exclusivity(unchecked) private var rowStartOffset = 0
    @exclusivity(unchecked) private var rowEndOffset = 0
    @exclusivity(unchecked) private var rowNextLineOffset: Int?
    @exclusivity(unchecked) private var rowNextLineAfterCR = false

    private var pendingRepairs: [String] = []
    private var pendingNotes: [String] = []
    @exclusivity(unchecked) private var repairedFieldCount = 0
    private var firstRepairLine: Int?
    /// Fields whose NUL bytes were removed, and the line of the first.
    @exclusivity(unchecked) private var nulFieldCount = 0
    private var firstNulLine: Int?
    @exclusivity(unchecked) private var blankRowsSkipped = 0
    private var endNotesEmitted = false
    /// The first row when it was glued to the header line, until it is handed out.
    private var mergedRow: [String]?
    /// The line the header starts on.
    private var headerLine = 1
    /// False in the reader that only collects a file's dates to decide their day/month order.
    var readsDates = true
    /// The file's day/month order once decided (nil inside: the dates decide none).
    private var dateOrder: DayMonthOrder??
    /// Rows with more fields than the header, and where the first few are.
    private var longRows = 0
    private var longRowPlaces: [String] = []

    private static let lf = UInt8(ascii: "\n")
    private static let cr = UInt8(ascii: "\r")

    /// Opens a file, fingerprints it, reads its encoding and header, and detects its format.
    ///
    /// - Parameters:
    ///   - path: The file to read.
    ///   - options: A forced format, column map or delimiter.
    /// - Throws: ``IngestError`` when the file cannot be opened or read, is empty, is not text,
    ///   has an unusable header, or matches no format and no title column can be found
    ///   (``IngestError/unknownFormat(file:headers:delimiter:)`` explains `--map`). A file with a
    ///   header and no data rows is not an error: the first ``nextBatch(maxRecords:)`` returns nil.
    public init(path: String, options: ImportOptions = ImportOptions()) throws(IngestError) {
        self.path = path
        self.options = options
        let source = try FileDescriptorReader(path: path)
        let size = try source.size()
        totalBytes = size

        // Pass 1: fingerprint, keeping the first 64 KiB for sniffing; the command may have had it
        // made already, while it opened the library (FingerprintPrefetch).
        var prefix: [UInt8]
        if let early = FingerprintPrefetch.shared.take(path: path, descriptor: source.descriptor) {
            fileHash = early
            prefix = size > 0 ? try Self.readPrefix(source, count: min(size, 64 * 1024)) : []
        } else {
            (fileHash, prefix) = try Self.fingerprintPass(source, size: size)
        }
        guard size > 0 else { throw .emptyFile(file: path) }

        // Encoding: a UTF-16 file is copied to a temporary UTF-8 file first.
        let encoding = SniffedEncoding.sniff(prefix)
        var text = source
        var start = encoding.bomLength
        var scale = 1.0
        var repairs: [String] = []
        if encoding == .utf16LE || encoding == .utf16BE {
            let (copy, replaced) = try UTF16Transcoder.transcode(source, bigEndian: encoding == .utf16BE, path: path)
            text = copy
            start = 0
            let copySize = try copy.size()
            scale = copySize > 0 ? Double(size) / Double(copySize) : 1
            prefix = []
            prefix = try Self.readPrefix(copy, count: 64 * 1024)
            if replaced > 0 {
                repairs.append("\(replaced) unpaired UTF-16 surrogate\(replaced == 1 ? " was" : "s were") replaced with U+FFFD")
            }
        } else {
            prefix.removeFirst(min(start, prefix.count))
        }
        textScale = scale
        if let problem = TextCheck.problem(inSample: prefix.prefix(1024)) {
            throw .notText(file: path, reason: problem)
        }
        let delimiter = options.delimiter ?? Self.sniffDelimiter(prefix)

        input = try ChunkedInput(reader: text, start: start)
        collector = RowCollector(maximumFields: Self.maximumFields, fieldLimit: Self.fieldLimit)
        parser = LibCSVParser(delimiter: delimiter, collector: collector)
        format = DetectedFormat(name: "", description: "", header: [], delimiter: delimiter, encoding: encoding.name)
        builder = RecordBuilder(map: FieldMap(), formatName: "", file: path, fileHash: fileHash, columnNames: [])
        pendingRepairs = repairs

        // The header row.
        guard let outcome = try readRow() else { throw .emptyFile(file: path) }
        if case .unclosedAtEnd = outcome {
            throw .badHeader(file: path, line: rowStartLine, reason: "has a quote that is never closed")
        }
        if let oversized = collector.oversized {
            throw .badHeader(
                file: path, line: rowStartLine,
                reason: "has a field longer than 1 MiB (column \(oversized.column))")
        }
        if collector.droppedFields > 0 {
            throw .badHeader(
                file: path, line: rowStartLine, reason: "has more than \(Self.maximumFields) columns")
        }
        var header = collector.fields
        headerLine = rowStartLine
        if !collector.repairedColumns.isEmpty {
            repairedFieldCount += collector.repairedColumns.count
            firstRepairLine = rowStartLine
        }
        if let merged = try splitMergedHeader(header) {
            header = merged.header
            mergedRow = merged.row
            pendingRepairs.append(merged.note)
        }
        try configure(header: header, delimiter: delimiter, encoding: encoding)
    }

    /// A header line that also holds the first row, split in two.
    private struct MergedHeader {
        var header: [String]
        var row: [String]
        var note: String
    }

    /// Looks for a first row glued to the header line (the line break after the header was
    /// lost): a header with cells that look like values (numbers, `="…"`), exactly one cell
    /// fewer than twice as wide as the next row, whose middle cell is the last header name with
    /// the first value stuck to it (`Owned Copies102955`). The next row is read to learn its
    /// width, then read again in its turn.
    private func splitMergedHeader(_ header: [String]) throws(IngestError) -> MergedHeader? {
        guard header.count >= 3, header.count % 2 == 1,
              header.count(where: Self.looksLikeValue) >= 2 else { return nil }
        let saved = (offset: input.position, line: line, pendingCR: pendingCR)
        defer { collector.reset() }
        guard case .complete? = try readRow(), collector.oversized == nil, collector.droppedFields == 0 else {
            try rewind(to: saved.offset, line: saved.line, afterCR: saved.pendingCR)
            return nil
        }
        let width = collector.row.count
        let nextFirst = collector.row.string(0)
        try rewind(to: saved.offset, line: saved.line, afterCR: saved.pendingCR)
        guard width >= 2, header.count == 2 * width - 1 else { return nil }
        // The glued cell: the last header name, then the first value.
        let glued = header[width - 1]
        var name = glued
        var value = ""
        if !nextFirst.isEmpty && nextFirst.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            let digits = glued.utf8.reversed().prefix { $0 >= 0x30 && $0 <= 0x39 }.count
            if digits > 0 && digits < glued.utf8.count {
                name = String(glued.dropLast(digits))
                value = String(glued.suffix(digits))
            }
        }
        let row = [value] + header[width...]
        let split = value.isEmpty
            ? "its first value could not be told from the header name \"\(glued)\", so that value is empty"
            : "\"\(glued)\" was read as the header \"\(name)\" and the value \"\(value)\""
        return MergedHeader(
            header: Array(header[..<(width - 1)]) + [name], row: row,
            note: "line \(headerLine) holds the header and the first row (the line break after the header was lost): "
                + "it has \(header.count) cells where the rows have \(width); the first \(width) were read as the "
                + "header and the rest as data row 1 (\(split))")
    }

    /// True for a header cell that looks like a value rather than a name: a number, or a
    /// spreadsheet formula such as Goodreads' `="0439023483"`.
    static func looksLikeValue(_ cell: String) -> Bool {
        let bytes = cell.utf8
        guard let first = bytes.first else { return false }
        if first == UInt8(ascii: "=") { return true }
        var digits = 0
        for byte in bytes {
            if byte >= 0x30 && byte <= 0x39 {
                digits += 1
            } else if byte != UInt8(ascii: ".") && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "/") {
                return false
            }
        }
        return digits > 0
    }

    /// True when a first row that names no known column is a data row: at least two of its cells,
    /// and at least a quarter of those that are not empty, look like values (numbers, ISBNs, dates).
    static func looksLikeData(_ row: [String]) -> Bool {
        let cells = row.map(\.trimmingSpaces).filter { !$0.isEmpty }
        let values = cells.count(where: looksLikeValue)
        return values >= 2 && 4 * values >= cells.count
    }

    /// Reads the first row back as a record when it was glued to the header line.
    private func appendMergedRow(_ fields: [String], into batch: inout IngestBatch) throws(IngestError) {
        let rowCollector = RowCollector(maximumFields: Self.maximumFields, fieldLimit: Self.fieldLimit)
        rowCollector.reset()
        for field in fields {
            var text = field
            text.withUTF8 { rowCollector.appendField(UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
        }
        dataRow += 1
        let needsDates = builder.appendRecord(
            fields: rowCollector.row, row: dataRow, line: headerLine, to: &batch.records)
        if needsDates && readsDates { try readDates(ofRecord: batch.records.count - 1, in: &batch) }
        batch.records[batch.records.count - 1].addFinding(Finding(
            code: "row.merged-with-header", severity: .warning, field: nil,
            message: "This book was on the header line (the line break after the header was lost); "
                + "it was read from the header line's last \(fields.count) cells."))
    }

    /// Reads the whole file once: its fingerprint (``ContentFingerprint``) and its first 64 KiB.
    static func fingerprintPass(_ source: FileDescriptorReader, size: Int) throws(IngestError)
        -> (fingerprint: String, prefix: [UInt8]) {
        var fingerprint = ContentFingerprint()
        var prefix: [UInt8] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ChunkedInput.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while offset < size {
            let count = try source.read(into: buffer, at: offset)
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            fingerprint.update(chunk)
            if offset == 0 { prefix = Array(chunk.prefix(64 * 1024)) }
            offset += count
        }
        return (fingerprint.finalize(), prefix)
    }

    private static func readPrefix(_ reader: FileDescriptorReader, count: Int) throws(IngestError) -> [UInt8] {
        try reader.readBytes(at: 0, count: count)
    }

    /// The delimiter of the first line: the most frequent of tab, comma and semicolon outside
    /// quotes (tab, then comma, on a tie; comma when there is none).
    static func sniffDelimiter(_ bytes: [UInt8]) -> UInt8 {
        let candidates: [UInt8] = [UInt8(ascii: "\t"), UInt8(ascii: ","), UInt8(ascii: ";")]
        var counts = [0, 0, 0]
        var inQuotes = false
        for byte in bytes {
            if byte == UInt8(ascii: "\"") {
                inQuotes.toggle()
            } else if !inQuotes {
                if byte == lf || byte == cr { break }
                if let index = candidates.firstIndex(of: byte) { counts[index] += 1 }
            }
        }
        var best = 1
        for index in [0, 1, 2] where counts[index] > counts[best] { best = index }
        return candidates[best]
    }

    // MARK: - Format detection

    private func configure(header: [String], delimiter: UInt8, encoding: SniffedEncoding) throws(IngestError) {
        let matching = MatchingHeader(header)
        pendingRepairs += matching.repairs
        var chosen: ImportFormat?
        if let forced = options.formatName?.lowercased() {
            if forced != "generic" {
                guard let known = ImportFormat.known.first(where: { $0.name == forced }) else {
                    throw .unknownFormatName(file: path, name: options.formatName ?? forced)
                }
                let missing = known.signature.filter { matching.index(of: [$0]) == nil }
                if !missing.isEmpty && options.columnMap.isEmpty {
                    throw .missingColumns(file: path, format: known.name, missing: missing, headers: header)
                }
                chosen = known
            }
        } else {
            chosen = ImportFormat.known.first { matching.contains(all: $0.signature) }
        }
        var map: FieldMap
        if let chosen {
            map = matching.resolve(chosen.columns, keys: chosen.keyColumns)
        } else {
            map = matching.resolve(ImportFormat.genericColumns, generic: true)
        }
        var mapped: [String] = []
        for (field, headerName) in options.columnMap.sorted(by: { $0.key < $1.key }) {
            let index = matching.index(of: [headerName]) ?? header.firstIndex(of: headerName)
            guard let index else {
                throw .mappedColumnNotFound(file: path, field: field, header: headerName, headers: header)
            }
            switch Self.canonicalField(field) {
            case "title": map.title = index
            case "author": map.authors = [(index, nil)]
            case "isbn": map.isbns = [(index, .single)]
            case "year": map.years = [index]
            case "publisher": map.publisher = index
            case "pages": map.pages = index
            case "shelf": map.shelf = index
            case "rating": map.rating = index
            case "added": map.dateAdded = index
            case "read": map.dateRead = index
            case "binding": map.binding = index
            case "review": map.review = index
            case "tags": map.tags = (index, ",")
            default: throw .unknownMapField(file: path, field: field)
            }
            mapped.append("\(Self.canonicalField(field))=\"\(header[index])\"")
        }
        if chosen == nil && map.title == nil {
            if Self.looksLikeData(header) { throw .headerLooksLikeData(file: path, firstRow: header) }
            throw .unknownFormat(file: path, headers: header, delimiter: delimiter)
        }
        let name = chosen?.name ?? "generic"
        var description: String
        if let chosen {
            description = chosen.describe(header, delimiter)
            if !mapped.isEmpty { description += ", columns mapped by --map: " + mapped.joined(separator: ", ") }
        } else {
            var used: [String] = []
            if let title = map.title { used.append("title=\"\(header[title])\"") }
            if let author = map.authors.first { used.append("author=\"\(header[author.index])\"") }
            for isbn in map.isbns { used.append("isbn=\"\(header[isbn.index])\"") }
            if map.authors.isEmpty { used.append("no author column") }
            description = "generic \(IngestError.delimiterName(delimiter))-separated file ("
                + (mapped.isEmpty ? "columns guessed: " : "columns: ") + used.joined(separator: ", ") + ")"
            if map.authors.isEmpty {
                pendingNotes.append(
                    "no column of the header could be read as the author, so the records have no authors; "
                        + "if one holds them, import again with --map author=<header> (headers: "
                        + IngestError.list(header) + ")")
            }
        }
        let quoting = Self.quoting(format: name, header: header, delimiter: delimiter)
        var reading = map.reading(format: name) + ";delimiter=\(delimiter)"
        let list = ListIdentity.listName(format: name, path: path, explicit: options.listName)
        var entryColumn = ListIdentity.idColumn(format: name, header: header)
        if let keyColumn = options.keyColumn {
            guard let index = matching.index(of: [keyColumn]) ?? header.firstIndex(of: keyColumn) else {
                throw .keyColumnNotFound(file: path, header: keyColumn, headers: header)
            }
            entryColumn = index
            reading += ";key=\(index)"
        }
        switch quoting {
        case .standard:
            break
        case .paddedWithSpaces:
            reading += ";quoting=padded"
            pendingRepairs.append(
                "the cells are padded with spaces to line the columns up (as an editor aligns them); the padding "
                    + "was dropped and a quote after it still opens a quoted field")
        case .none:
            reading += ";quoting=none"
        }
        parser.setQuoting(quoting)
        format = DetectedFormat(
            name: name, description: description, header: header, delimiter: delimiter,
            encoding: repairedFieldCount > 0 ? "latin1-repaired" : encoding.name, reading: reading,
            entryColumn: entryColumn, list: list)
        builder = RecordBuilder(map: map, formatName: name, file: path, fileHash: fileHash, columnNames: matching.names,
                                list: list, entryColumn: entryColumn)
        width = header.count
        collector.expectedWidth = max(1, header.count)
    }

    /// How the rows of a file are quoted, decided from its format and header.
    ///
    /// - LibraryThing's TSV export has no quoting at all: a summary may start with a quoted title
    ///   (`"Plume …" par Henri Michaux`), which is text, not an opening quote.
    /// - A header whose cells are padded with spaces (at least two, and at least half of the
    ///   cells that are not empty) comes from an editor that aligned the columns: the rows are
    ///   padded the same way, often with a space before an opening quote.
    static func quoting(format: String, header: [String], delimiter: UInt8) -> CSVQuoting {
        if format == "librarything" && delimiter == UInt8(ascii: "\t") { return .none }
        guard delimiter != UInt8(ascii: " ") else { return .standard }
        var padded = 0
        var nonEmpty = 0
        for cell in header where cell.hasNonSpace {
            nonEmpty += 1
            if cell.utf8.first == UInt8(ascii: " ") || cell.utf8.last == UInt8(ascii: " ") { padded += 1 }
        }
        return padded >= 2 && 2 * padded >= nonEmpty ? .paddedWithSpaces : .standard
    }

    /// `--map` field names and their aliases.
    static func canonicalField(_ field: String) -> String {
        let key = field.lowercased().filter { $0 != "_" && $0 != "-" && $0 != " " }
        switch key {
        case "title": return "title"
        case "author", "authors": return "author"
        case "isbn", "isbn13", "isbn10": return "isbn"
        case "year", "publicationyear": return "year"
        case "publisher": return "publisher"
        case "pages", "pagecount": return "pages"
        case "shelf", "status": return "shelf"
        case "rating": return "rating"
        case "added", "dateadded": return "added"
        case "read", "dateread", "finished": return "read"
        case "binding", "format", "media": return "binding"
        case "review", "myreview": return "review"
        case "tags", "tag", "bookshelves": return "tags"
        default: return key
        }
    }

    // MARK: - Reading rows

    private enum RowOutcome {
        /// A row ended normally.
        case complete(endLine: Int)
        /// The file ended inside a quoted field.
        case unclosedAtEnd
    }

    private func beginRow(at offset: Int) {
        rowInProgress = true
        rowStartLine = line
        rowStartOffset = offset
        rowNextLineOffset = nil
        rowNextLineAfterCR = false
        collector.reset()
    }

    /// Feeds libcsv one line (or 64 KiB) at a time until a row ends or the file does.
    private func readRow() throws(IngestError) -> RowOutcome? {
        while true {
            guard try input.ensureBytes(), let base = input.buffer.baseAddress else {
                guard rowInProgress else { return nil }
                rowEndOffset = input.position
                rowInProgress = false
                if parser.isInsideQuotedField { return .unclosedAtEnd }
                parser.finish()
                return .complete(endLine: line)
            }
            let start = input.cursor
            let count = input.bufferCount
            if pendingCR {
                pendingCR = false
                if input.buffer[start] == Self.lf {
                    // The LF of a CRLF split across chunks: no new line.
                    if rowInProgress && !parser.parse(base + start, count: 1) {
                        throw .readFailed(file: path, reason: "libcsv ran out of memory at line \(line)")
                    }
                    input.cursor = start + 1
                    continue
                }
            }
            let limit = min(count, start + Self.pieceLimit)
            let terminator = min(input.find(Self.lf, cached: &input.nextLF), input.find(Self.cr, cached: &input.nextCR))
            var end = limit
            var endsLine = false
            if terminator < limit {
                endsLine = true
                end = terminator + 1
                if input.buffer[terminator] == Self.cr {
                    if end < count {
                        if input.buffer[end] == Self.lf { end += 1 }
                    } else {
                        pendingCR = true
                    }
                }
            }
            if !rowInProgress {
                if endsLine && Self.isBlank(input.buffer, start..<terminator) {
                    input.cursor = end
                    line += 1
                    continue
                }
                beginRow(at: input.bufferOffset + start)
                // The row's lines are checked as they are handed over (``RowCollector/inputIsPlain``).
                checkLine(UnsafeRawBufferPointer(start: base + start, count: end - start))
            } else if collector.inputIsPlain {
                checkLine(UnsafeRawBufferPointer(start: base + start, count: end - start))
            }
            guard parser.parse(base + start, count: end - start) else {
                throw .readFailed(file: path, reason: "libcsv ran out of memory at line \(line)")
            }
            input.cursor = end
            let pending = parser.pendingFieldLength
            if pending > Self.fieldLimit {
                collector.discardedBytes += pending
                parser.discardPendingFieldBytes()
            }
            if collector.rowEnded {
                rowInProgress = false
                rowEndOffset = input.bufferOffset + end
                let endLine = line
                if endsLine { line += 1 }
                return .complete(endLine: endLine)
            }
            if endsLine {
                line += 1
                if rowNextLineOffset == nil {
                    rowNextLineOffset = input.bufferOffset + end
                    rowNextLineAfterCR = pendingCR
                }
            }
        }
    }

    /// Checks a line of the row before libcsv reads it (``RowCollector/inputIsPlain``).
    @inline(__always)
    private func checkLine(_ bytes: UnsafeRawBufferPointer) {
        switch RowCollector.checkLine(bytes) {
        case .ascii: collector.inputIsPlain = true
        case .utf8:
            collector.inputIsPlain = true
            collector.noteNonASCIIInput()
        case .fieldByField: collector.inputIsPlain = false
        }
    }

    /// True when a quoted field in the bytes holds a quote that is neither doubled nor followed
    /// by a delimiter or line end: the mark of a quote that was never closed and of a later quote
    /// that happened to close it. libcsv (non-strict) accepts such text silently; this check only
    /// runs for rows that span lines.
    private func hasStrayQuote(from start: Int, to end: Int) throws(IngestError) -> Bool {
        let quote = UInt8(ascii: "\"")
        let space = UInt8(ascii: " ")
        let delimiter = format.delimiter
        let padded = parser.quoting == .paddedWithSpaces
        enum State { case fieldStart, unquoted, quoted, quoteInQuoted, closed }
        var state = State.fieldStart
        func scan(_ bytes: UnsafeRawBufferPointer) -> Bool {
            for byte in bytes {
                switch state {
                case .fieldStart:
                    if padded && byte == space { continue }
                    state = byte == quote ? .quoted : (byte == delimiter ? .fieldStart : .unquoted)
                case .unquoted:
                    if byte == delimiter || byte == Self.lf || byte == Self.cr { state = .fieldStart }
                case .quoted:
                    if byte == quote { state = .quoteInQuoted }
                case .quoteInQuoted, .closed:
                    if byte == quote && state == .quoteInQuoted {
                        state = .quoted
                    } else if byte == delimiter || byte == Self.lf || byte == Self.cr {
                        state = .fieldStart
                    } else if padded && byte == space {
                        state = .closed
                    } else {
                        return true
                    }
                }
            }
            return false
        }
        // Usually the row is still in the read window.
        if start >= input.bufferOffset && end <= input.bufferOffset + input.bufferCount {
            let from = start - input.bufferOffset
            return scan(UnsafeRawBufferPointer(rebasing: input.buffer[from..<(from + end - start)]))
        }
        var offset = start
        let stop = min(end, start + 16 * Self.fieldLimit)
        while offset < stop {
            let bytes = try input.peek(at: offset, limit: min(Self.pieceLimit, stop - offset))
            if bytes.isEmpty { break }
            if bytes.withUnsafeBytes(scan) { return true }
            offset += bytes.count
        }
        return false
    }

    private static func isBlank(_ buffer: UnsafeMutableRawBufferPointer, _ range: Range<Int>) -> Bool {
        for index in range where buffer[index] != UInt8(ascii: " ") && buffer[index] != UInt8(ascii: "\t") {
            return false
        }
        return true
    }

    /// Goes back to the line after a rejected row's first line and parses on from there.
    private func rewind(to offset: Int, line newLine: Int, afterCR: Bool) throws(IngestError) {
        try input.seek(to: offset)
        line = newLine
        pendingCR = afterCR
        parser.reset()
        rowInProgress = false
    }

    // MARK: - Batches

    /// Reads the next batch of records.
    ///
    /// - Parameter maxRecords: The most records plus rejected rows in one batch (at least 1).
    /// - Returns: The batch, or nil once the file is done and every note was handed out. A batch
    ///   may hold only repairs and notes (for example for a file with a header and no data rows).
    /// - Throws: ``IngestError/readFailed(file:reason:)`` when the disk read fails part way.
    public func nextBatch(maxRecords: Int) throws(IngestError) -> IngestBatch? {
        var batch = IngestBatch(repairs: pendingRepairs, notes: pendingNotes)
        pendingRepairs = []
        pendingNotes = []
        let limit = max(1, maxRecords)
        batch.records.reserveCapacity(min(limit, 8192))
        if let row = mergedRow {
            mergedRow = nil
            try appendMergedRow(row, into: &batch)
        }
        while !finished && batch.records.count + batch.rejected.count < limit {
            guard let outcome = try readRow() else {
                finished = true
                break
            }
            try handle(outcome, into: &batch)
        }
        batch.repairs += pendingRepairs
        batch.notes += pendingNotes
        pendingRepairs = []
        pendingNotes = []
        if finished && !endNotesEmitted {
            endNotesEmitted = true
            let end = endNotes()
            batch.repairs += end.repairs
            batch.notes += end.notes
        }
        if finished && batch.records.isEmpty && batch.rejected.isEmpty && batch.repairs.isEmpty && batch.notes.isEmpty {
            return nil
        }
        return batch
    }

    /// What the whole file showed once it was read: the Latin-1 repair, and notes on extra fields
    /// and blank rows.
    private func endNotes() -> (repairs: [String], notes: [String]) {
        var repairs: [String] = []
        var notes: [String] = []
        if repairedFieldCount > 0 {
            repairs.append(
                "\(repairedFieldCount) field\(repairedFieldCount == 1 ? " had" : "s had") bytes that are not valid UTF-8; "
                    + "they were read as Latin-1 (Windows-1252), first at line \(firstRepairLine ?? 1)")
        }
        if nulFieldCount > 0 {
            repairs.append(
                "\(nulFieldCount) field\(nulFieldCount == 1 ? " had" : "s had") NUL bytes, which were removed "
                    + "(a NUL is never text), first at line \(firstNulLine ?? 1)")
        }
        if longRows > 0 {
            notes.append(
                "\(longRows) row\(longRows == 1 ? " has" : "s have") more fields than the header's \(width) ("
                    + longRowPlaces.joined(separator: ", ") + (longRows > longRowPlaces.count ? ", …" : "")
                    + "): the first \(width) were read and the rest kept in the raw fields only; check "
                    + (longRows == 1 ? "that line" : "those lines") + " (a lost line break or a stray delimiter)")
        }
        if blankRowsSkipped > 0 {
            notes.append("\(blankRowsSkipped) row\(blankRowsSkipped == 1 ? "" : "s") with no values were skipped")
        }
        return (repairs, notes)
    }

    private func handle(_ outcome: RowOutcome, into batch: inout IngestBatch) throws(IngestError) {
        switch outcome {
        case .unclosedAtEnd:
            dataRow += 1
            let column = collector.row.count + 1
            let next = rowNextLineOffset.flatMap { $0 < input.size ? $0 : nil }
            try reject(
                column: column, reason: Self.unclosedQuoteReason(line: rowStartLine, column: column, resumes: next != nil),
                textEnd: next ?? rowEndOffset, into: &batch)
            if let next {
                try rewind(to: next, line: rowStartLine + 1, afterCR: rowNextLineAfterCR)
            } else {
                parser.reset()
            }
        case .complete(let endLine):
            let fields = collector.row
            if collector.oversized == nil && collector.droppedFields == 0 && !fields.anyNonSpace {
                blankRowsSkipped += 1
                return
            }
            dataRow += 1
            noteRepairs()
            let count = fields.count + collector.droppedFields
            var unclosed = false
            if endLine > rowStartLine && rowNextLineOffset != nil {
                unclosed = count != width
                if !unclosed { unclosed = try hasStrayQuote(from: rowStartOffset, to: rowEndOffset) }
            }
            if unclosed, let next = rowNextLineOffset {
                let column = (fields.firstFieldWithLineBreak() ?? 0) + 1
                try reject(
                    column: column, reason: Self.unclosedQuoteReason(line: rowStartLine, column: column, resumes: true),
                    textEnd: next, into: &batch)
                try rewind(to: next, line: rowStartLine + 1, afterCR: rowNextLineAfterCR)
                return
            }
            if let oversized = collector.oversized {
                try reject(
                    column: oversized.column,
                    reason: "field in column \(oversized.column) is larger than the 1 MiB limit "
                        + "(\(oversized.length) bytes); the row was skipped",
                    textEnd: rowEndOffset, into: &batch)
                return
            }
            if collector.droppedFields > 0 {
                try reject(
                    column: nil,
                    reason: "row has \(count) fields, more than the \(Self.maximumFields) bookpipe reads; the row was skipped",
                    textEnd: rowEndOffset, into: &batch)
                return
            }
            let usable = builder.isUsable(fields)
            if count != width && !usable {
                try reject(
                    column: nil,
                    reason: "row has \(count) field\(count == 1 ? "" : "s") but the header has \(width), "
                        + "and no \(builder.map.title == nil ? "key" : "title") could be read; the row was skipped",
                    textEnd: rowEndOffset, into: &batch)
                return
            }
            // Appended as built; the rare findings below change it in its place in the batch.
            let needsDates = builder.appendRecord(fields: fields, row: dataRow, line: rowStartLine, to: &batch.records)
            if count == width && collector.repairedColumns.isEmpty && collector.nulColumns.isEmpty && !needsDates { return }
            let last = batch.records.count - 1
            if needsDates && readsDates { try readDates(ofRecord: last, in: &batch) }
            if count < width {
                batch.records[last].addFinding(Finding(
                    code: "row.short", severity: .warning, field: nil,
                    message: "The row has \(count) field\(count == 1 ? "" : "s") but the header has \(width); "
                        + "the missing fields were read as empty."))
            } else if count > width {
                batch.records[last].addFinding(Finding(
                    code: "row.long", severity: .warning, field: nil,
                    message: "The row has \(count) fields but the header has \(width); "
                        + "the extra fields are kept in the raw fields only."))
                longRows += 1
                if longRowPlaces.count < 5 { longRowPlaces.append("line \(rowStartLine): \(count) fields") }
            }
            for column in collector.repairedColumns {
                let name = column < builder.columnNames.count ? builder.columnNames[column] : "column \(column + 1)"
                batch.records[last].addFinding(Finding(
                    code: "encoding.latin1-repaired", severity: .info, field: name,
                    message: "Bytes in \"\(name)\" that are not valid UTF-8 were read as Latin-1 (Windows-1252)."))
            }
            for column in collector.nulColumns {
                let name = column < builder.columnNames.count ? builder.columnNames[column] : "column \(column + 1)"
                batch.records[last].addFinding(Finding(
                    code: "encoding.nul-removed", severity: .warning, field: name,
                    message: "\"\(name)\" held NUL bytes, which were removed (a NUL is never text, and the library "
                        + "cannot keep one); the rest of the value is as read."))
            }
        }
    }

    // MARK: - Dates

    /// Reads the date cells of a record that are not valid year-first dates (``ReadDate``):
    /// each becomes ISO `yyyy-MM-dd`, or nil with a `date.unparseable` finding; the text as written
    /// stays in the raw fields. A date that could be day or month first (`4/1/2024`) is read in
    /// the order the file's unambiguous dates decide (``fileDateOrder()``).
    private func readDates(ofRecord index: Int, in batch: inout IngestBatch) throws(IngestError) {
        let columns: [(Int?, WritableKeyPath<BookRecord, String?>)] = [
            (builder.map.dateAdded, \.dateAdded), (builder.map.dateRead, \.dateRead),
        ]
        for (column, keyPath) in columns {
            guard let column, let text = batch.records[index][keyPath: keyPath] else { continue }
            var copy = text
            if copy.withUTF8({ ReadDate.isValidYearFirst($0) }) { continue }
            var result = ReadDate.parse(text, order: nil)
            if case .failure(.ambiguous) = result { result = ReadDate.parse(text, order: try fileDateOrder()) }
            switch result {
            case .success(let date):
                batch.records[index][keyPath: keyPath] = date.iso
            case .failure(let failure):
                guard let finding = ReadDate.finding(for: failure, field: builder.columnNames[column]) else { continue }
                batch.records[index][keyPath: keyPath] = nil
                batch.records[index].addFinding(finding)
            }
        }
    }

    /// The file's day/month order, decided once from every date of the file that can only be
    /// read one way (a second reader goes through the file; only files with such dates pay for it).
    private func fileDateOrder() throws(IngestError) -> DayMonthOrder? {
        if let decided = dateOrder { return decided }
        var vote = DayMonthOrder.Vote()
        let scan = try CSVRecordReader(path: path, options: options)
        scan.readsDates = false
        while let batch = try scan.nextBatch(maxRecords: 4096) {
            for record in batch.records {
                if let text = record.dateAdded { vote.observe(text) }
                if let text = record.dateRead { vote.observe(text) }
            }
        }
        dateOrder = .some(vote.decision)
        func proven(_ count: Int, _ example: String?) -> String {
            "\(count) date\(count == 1 ? "" : "s") in the file can only be read that way (first \"\(example ?? "")\") "
                + "and none the other way"
        }
        switch vote.decision {
        case .monthFirst?:
            pendingNotes.append("dates with the year last were read month first (M/D/YYYY): "
                + proven(vote.monthFirst, vote.monthFirstExample))
        case .dayFirst?:
            pendingNotes.append("dates with the year last were read day first (D/M/YYYY): "
                + proven(vote.dayFirst, vote.dayFirstExample))
        case nil where vote.dayFirst > 0:
            pendingNotes.append(
                "the file's dates contradict each other (\"\(vote.dayFirstExample ?? "")\" can only be day first, "
                    + "\"\(vote.monthFirstExample ?? "")\" only month first), "
                    + "so dates that could be either were left empty")
        case nil:
            pendingNotes.append(
                "no date in the file tells whether dates such as 4/1/2024 are day first or month first, "
                    + "so such dates were left empty (the text is kept in the raw fields)")
        }
        return vote.decision
    }

    private func noteRepairs() {
        if !collector.nulColumns.isEmpty {
            nulFieldCount += collector.nulColumns.count
            if firstNulLine == nil { firstNulLine = rowStartLine }
        }
        guard !collector.repairedColumns.isEmpty else { return }
        repairedFieldCount += collector.repairedColumns.count
        if firstRepairLine == nil {
            firstRepairLine = rowStartLine
            format = DetectedFormat(
                name: format.name, description: format.description, header: format.header,
                delimiter: format.delimiter, encoding: "latin1-repaired", reading: format.reading,
                entryColumn: format.entryColumn, list: format.list)
        }
    }

    static func unclosedQuoteReason(line: Int, column: Int, resumes: Bool) -> String {
        "unclosed quote starting at line \(line), column \(column); the row was skipped"
            + (resumes ? " and reading went on at line \(line + 1)" : "")
    }

    private func reject(column: Int?, reason: String, textEnd: Int, into batch: inout IngestBatch) throws(IngestError) {
        batch.rejected.append(RejectedRow(
            fileHash: fileHash, file: path, line: rowStartLine, row: dataRow, column: column, reason: reason,
            rawText: try rawText(from: rowStartOffset, to: textEnd)))
    }

    /// The row's bytes as text, at most ``RejectedRow/rawTextLimit`` bytes, without the final line end.
    private func rawText(from start: Int, to end: Int) throws(IngestError) -> String {
        var bytes = try input.peek(at: start, limit: min(max(0, end - start), RejectedRow.rawTextLimit))
        while let last = bytes.last, last == Self.lf || last == Self.cr { bytes.removeLast() }
        // Do not cut a UTF-8 sequence in half.
        var lead = bytes.count - 1
        while lead >= 0 && lead >= bytes.count - 4 && bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
        if lead >= 0 && bytes[lead] >= 0xC0 {
            let needed = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2
            if bytes.count - lead < needed { bytes.removeLast(bytes.count - lead) }
        }
        return bytes.withUnsafeBytes { TextDecoding.decodeRepairingLatin1($0) }
    }
}

@available(*, unavailable, message: "a CSVRecordReader is used by one task from start to end")
extension CSVRecordReader: Sendable {}
