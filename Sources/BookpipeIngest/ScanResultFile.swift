import BookpipeCore

/// A bookshelf scan result file (JSON) read into records: one ``BookRecord`` per detection.
///
/// Three shapes are accepted (examples in `samples/shelf-scan/`):
///
/// - **A bare list of detections**, the photo given separately (`--photo`, see
///   ``Options/photo``): `[{"title": "DUNE", "author": "FRANK HERBERT", "confidence": 0.93,
///   "boundingBox": {"x": 0.08, "y": 0.11, "width": 0.05, "height": 0.83}}, …]`.
/// - **An envelope** with any number of scans: `{"format": "bookshelf-scan", "version": 1,
///   "scans": [{"scanId": "…", "originalImagePath": "shelf.jpg", "capturedAt": "…",
///   "imageWidth": 4032, "imageHeight": 3024, "books": [detection, …]}]}` (`capturedAt`,
///   `imageWidth` and `imageHeight` optional).
/// - **One photo's object**: `{"photo": "shelf.jpg", "detections": [detection, …]}` (the shape of
///   `samples/shelf-scan/scan.json`).
///
/// A detection has `title` (text), `author` (text, null, or a list of texts), `isbn` (text, may
/// be missing or null; kept as read in ``BookRecord/rawISBNs``, so normalisation checks it and an
/// invalid one gets a finding, as in `bookpipe scan`), `confidence` (a
/// number in 0…1, may be missing) and `boundingBox` (also read from `box` or `bbox`) normalised
/// to the upright photo: `{"x", "y", "width", "height"}` with numbers or numeric strings, or
/// `[x, y, width, height]`, or missing.
///
/// **Record ids.** A record's id is `<fileHash>:<row>`, where the file hash is the
/// ``ContentFingerprint`` of the file's bytes and the row numbers the detections of the whole file
/// 1, 2, 3, … in file order: the first scan's detections first, then the second scan's, and so on.
/// Every element of a scan's detection list takes a row number, also one that is rejected, so the
/// numbering depends on nothing but the file's bytes and a rerun of the same file never
/// duplicates a record. A scan rejected as a whole (its `books` is not a list) takes no row
/// numbers. The position within the scan is ``ScanDetection/index`` (the export's
/// `source.index`); for a file with one scan, row and index are equal.
///
/// **Confidence.** A confidence that is not a number in 0…1 (a string, 1.7, −0.2, `NaN`,
/// `Infinity`) is never clamped: the record is kept with no confidence and a
/// ``ScanFindingCode/confidenceInvalid`` finding quoting the value, and ``ReviewRouting`` sends it
/// to a person. (Rejecting the detection instead would force the user to edit the file, which
/// changes its fingerprint and therefore every record id of the file.)
///
/// **Problems.** The whole file fails (``ScanResultError``, nothing imported) when it cannot be
/// read, is not UTF-8, is not valid JSON (with line and column), or is not one of the shapes. A
/// scan with a wrongly typed `scanId`, `originalImagePath` or `books` is rejected as a whole
/// (a ``RejectedRow`` without a row) and the next scans are still read. A detection that is not an
/// object or has no title is a rejected row. A refused or missing photo keeps the detections,
/// without a photo, each with a finding saying why.
///
/// ```swift
/// let scan = try ScanResultFile(path: "samples/shelf-scan/scan.json")
/// for var record in scan.records { ReviewRouting.standard.route(&record) }
/// ```
public struct ScanResultFile: Sendable {
    /// How to read a scan result file.
    public struct Options: Sendable, Hashable {
        /// The photo for scans that name none (a bare list, or `--photo`), as typed on the command
        /// line: relative to the current directory. It must still lie inside the scan file's folder.
        public var photo: String?
        /// The largest file read, in bytes (256 MiB by default).
        public var maxFileSize: Int

        /// Creates options.
        /// - Parameters:
        ///   - photo: The photo for scans that name none, relative to the current directory.
        ///   - maxFileSize: The largest file read, in bytes.
        public init(photo: String? = nil, maxFileSize: Int = 256 << 20) {
            self.photo = photo
            self.maxFileSize = maxFileSize
        }
    }

    /// Which of the accepted shapes the file has.
    public enum Shape: String, Sendable, Hashable {
        /// A bare JSON list of detections.
        case detectionList = "detection-list"
        /// `{"format": "bookshelf-scan", "version": 1, "scans": [...]}`.
        case envelope
        /// `{"photo": "…", "detections": [...]}`.
        case photoObject = "photo-object"
    }

    /// The file as given.
    public let file: String
    /// The file's content fingerprint (the first half of every record id).
    public let fileHash: String
    /// The file's size in bytes.
    public let size: Int
    /// The file's shape.
    public let shape: Shape
    /// The scans whose detections were read, in file order (scans rejected as a whole are in
    /// ``rejected`` instead).
    public let scans: [ScanSummary]
    /// One record per readable detection, in file order; review status not yet routed.
    public let records: [BookRecord]
    /// Scans rejected as a whole (no row) and detections that could not be read (with their row).
    public let rejected: [RejectedRow]
    /// How many row numbers the file's detections use: the records plus the rejected detections.
    public let rowCount: Int

    /// The input description sources announce before their records (format `scan`).
    public var input: InputFile {
        InputFile(path: file, fileHash: fileHash, format: "scan", formatDescription: shapeDescription,
                  encoding: "UTF-8", size: size, estimatedRows: rowCount)
    }

    /// The shape for people, for example `bookshelf scan envelope (2 scans)`.
    public var shapeDescription: String {
        switch shape {
        case .detectionList: "bookshelf scan: a list of detections"
        case .envelope: "bookshelf scan envelope (\(scans.count) scan\(scans.count == 1 ? "" : "s"))"
        case .photoObject: "bookshelf scan: one photo's detections"
        }
    }

    /// Reads a whole scan result file.
    ///
    /// The file is read into memory (at most ``Options/maxFileSize`` bytes); photo paths are
    /// resolved with ``ScanPhotoPath`` (nothing is opened but the scan file; photos are only
    /// resolved and checked to be regular files).
    ///
    /// - Parameters:
    ///   - path: The scan result file, as given on the command line.
    ///   - options: The photo for scans that name none, and the size limit.
    /// - Throws: ``ScanResultError`` when nothing can be imported from the file: it cannot be read,
    ///   is empty, too large, not UTF-8, not valid JSON (with line and column), or not a scan result.
    public init(path: String, options: Options = Options()) throws(ScanResultError) {
        let bytes = try Self.readBytes(path, limit: options.maxFileSize)
        try self.init(bytes: bytes, path: path, options: options)
    }

    /// Reads a scan result from bytes that were read from `path`.
    ///
    /// - Parameters:
    ///   - bytes: The file's bytes.
    ///   - path: The file the bytes came from (names it in messages; its folder is the scan folder).
    ///   - options: The photo for scans that name none.
    /// - Throws: ``ScanResultError`` as ``init(path:options:)``.
    public init(bytes: [UInt8], path: String, options: Options = Options()) throws(ScanResultError) {
        var fingerprint = ContentFingerprint()
        bytes.withUnsafeBytes { fingerprint.update($0) }
        var reader = ScanResultReader(bytes: bytes, file: path, fileHash: fingerprint.finalize(), options: options)
        try reader.read()
        self.file = path
        self.fileHash = reader.fileHash
        self.size = bytes.count
        self.shape = reader.shape
        self.scans = reader.scans
        self.records = reader.records
        self.rejected = reader.rejected
        self.rowCount = reader.nextRow - 1
    }

    private static func readBytes(_ path: String, limit: Int) throws(ScanResultError) -> [UInt8] {
        let reader: FileDescriptorReader
        do {
            reader = try FileDescriptorReader(path: path)
        } catch {
            throw .cannotOpen(file: path, reason: error.reason)
        }
        do {
            let size = try reader.size()
            if size > limit { throw ScanResultError.tooLarge(file: path, size: size, limit: limit) }
            // One byte more than the size, to notice a file that grows while it is read.
            let bytes = try reader.readBytes(at: 0, count: size + 1)
            if bytes.count > limit { throw ScanResultError.tooLarge(file: path, size: bytes.count, limit: limit) }
            return bytes
        } catch let error as ScanResultError {
            throw error
        } catch let error as IngestError {
            throw .readFailed(file: path, reason: error.reason)
        } catch {
            throw .readFailed(file: path, reason: "\(error)")
        }
    }
}

/// One scan of a scan result file: its name, photo and where its detections are.
public struct ScanSummary: Sendable, Hashable {
    /// The scan's name: its `scanId`, or the file name for a bare list or one photo's object.
    public var name: String
    /// The 1-based position of the scan in the file.
    public var ordinal: Int
    /// The 1-based line where the scan starts.
    public var line: Int
    /// The first row number of its detections (meaningless when it has none).
    public var firstRow: Int
    /// How many detections its list holds (records and rejected detections).
    public var detectionCount: Int
    /// `capturedAt` as written, when it is text.
    public var capturedAt: String?
    /// `imageWidth` when it is a positive whole number.
    public var imageWidth: Int?
    /// `imageHeight` when it is a positive whole number.
    public var imageHeight: Int?
    /// The photo, resolved inside the scan folder; nil when there is none or it was refused.
    public var photo: ResolvedScanPhoto?
    /// Why the photo was refused, when it was.
    public var photoError: ScanPhotoError?
    /// Things about the scan that were ignored (a wrongly typed `imageWidth`, …), for people.
    public var notes: [String]

    /// The rows of its detections.
    public var rows: Range<Int> { firstRow..<(firstRow + detectionCount) }
}

extension IngestError {
    /// The reason part of the message (without the file name).
    var reason: String {
        switch self {
        case .cannotOpen(_, let reason), .readFailed(_, let reason), .notText(_, let reason): reason
        default: description
        }
    }
}

/// The reading of one file; ``ScanResultFile`` keeps what it produced.
struct ScanResultReader {
    let bytes: [UInt8]
    let file: String
    let fileHash: String
    let options: Options
    let lines: LineIndex
    let scanFolder: String
    let fileName: String

    typealias Options = ScanResultFile.Options

    var shape: ScanResultFile.Shape = .detectionList
    var scans: [ScanSummary] = []
    var records: [BookRecord] = []
    var rejected: [RejectedRow] = []
    var nextRow = 1

    init(bytes: [UInt8], file: String, fileHash: String, options: Options) {
        self.bytes = bytes
        self.file = file
        self.fileHash = fileHash
        self.options = options
        let bomLength = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        self.lines = LineIndex(bytes, skippingBOM: bomLength)
        if let slash = file.lastIndex(of: "/") {
            let folder = String(file[..<slash])
            self.scanFolder = folder.isEmpty ? "/" : folder
            self.fileName = String(file[file.index(after: slash)...])
        } else {
            self.scanFolder = "."
            self.fileName = file
        }
    }

    func location(_ offset: Int) -> (line: Int, column: Int) { lines.location(of: offset) }

    func place(_ offset: Int) -> String {
        let (line, column) = location(offset)
        return "line \(line), column \(column)"
    }

    mutating func read() throws(ScanResultError) {
        let bomLength = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        if bytes.dropFirst(bomLength).allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            throw .emptyFile(file: file)
        }
        if let bad = Self.firstInvalidUTF8(bytes) {
            let (line, column) = location(bad)
            throw .notUTF8(file: file, line: line, column: column)
        }
        let lines = self.lines
        var parser = PositionedJSONParser(bytes: bytes, start: bomLength) { offset in
            let (line, column) = lines.location(of: offset)
            return "line \(line), column \(column)"
        }
        let root: JSONNode
        do {
            root = try parser.parseDocument()
        } catch {
            let (line, column) = location(error.offset)
            throw .invalidJSON(file: file, line: line, column: column, reason: error.message)
        }
        switch root.value {
        case .array(let detections):
            shape = .detectionList
            readScan(name: fileName, ordinal: 1, node: root, detections: detections, photoGiven: nil, metadata: nil)
        case .object:
            if root["scans"] != nil || root["format"] != nil {
                shape = .envelope
                try readEnvelope(root)
            } else if let detections = root["detections"] {
                shape = .photoObject
                try readPhotoObject(root, detections: detections)
            } else {
                let keys = Self.keyList(root)
                throw .unknownShape(file: file, found: keys.isEmpty ? "an empty object" : "an object with the keys \(keys)")
            }
        default:
            throw .unknownShape(file: file, found: root.kindDescription)
        }
    }

    static func keyList(_ node: JSONNode) -> String {
        guard case .object(let members) = node.value else { return "" }
        let keys = members.prefix(10).map { "\"\($0.key)\"" }.joined(separator: ", ")
        return members.count > 10 ? keys + ", …" : keys
    }

    /// The offset of the first byte that is not valid UTF-8, or nil.
    static func firstInvalidUTF8(_ bytes: [UInt8]) -> Int? {
        if String(validating: bytes, as: UTF8.self) != nil { return nil }
        var offset = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    // MARK: Shapes

    private mutating func readEnvelope(_ root: JSONNode) throws(ScanResultError) {
        if let format = root["format"] {
            guard case .string(let name) = format.value, name == "bookshelf-scan" else {
                let (line, column) = location(format.start)
                let shown = Self.text(of: format, in: bytes, limit: 60)
                throw .unsupportedEnvelope(file: file, line: line, column: column,
                                           reason: "the format is \(shown), not \"bookshelf-scan\"")
            }
        }
        if let version = root["version"] {
            let isOne: Bool
            switch version.value {
            case .number(let value, _): isOne = value == 1
            case .string(let text): isOne = text == "1"
            default: isOne = false
            }
            guard isOne else {
                let (line, column) = location(version.start)
                let shown = Self.text(of: version, in: bytes, limit: 60)
                throw .unsupportedEnvelope(file: file, line: line, column: column,
                                           reason: "version \(shown) is not one this bookpipe reads (it reads version 1)")
            }
        }
        guard let scansNode = root["scans"] else {
            throw .unknownShape(file: file, found: "a bookshelf-scan envelope without \"scans\"")
        }
        guard case .array(let scanNodes) = scansNode.value else {
            let (line, column) = location(scansNode.start)
            throw .unsupportedEnvelope(file: file, line: line, column: column,
                                       reason: "\"scans\" is \(scansNode.kindDescription), not a list of scans")
        }
        for (offset, node) in scanNodes.enumerated() {
            readEnvelopeScan(node, ordinal: offset + 1)
        }
    }

    private mutating func readPhotoObject(_ root: JSONNode, detections: JSONNode) throws(ScanResultError) {
        guard case .array(let elements) = detections.value else {
            let (line, column) = location(detections.start)
            throw .unsupportedEnvelope(file: file, line: line, column: column,
                                       reason: "\"detections\" is \(detections.kindDescription), not a list of detections")
        }
        var photo: String?
        var notes: [String] = []
        switch root["photo"]?.value {
        case .string(let path)?: photo = path
        case nil, .null?: break
        case .some:
            notes.append("\"photo\" is \(root["photo"]?.kindDescription ?? "not text"), not a path; ignored")
        }
        readScan(name: fileName, ordinal: 1, node: root, detections: elements, photoGiven: photo,
                 metadata: ScanMetadata(notes: notes))
    }

    struct ScanMetadata {
        var capturedAt: String?
        var imageWidth: Int?
        var imageHeight: Int?
        var notes: [String] = []
    }

    private mutating func readEnvelopeScan(_ node: JSONNode, ordinal: Int) {
        let where_ = "scan \(ordinal) (\(place(node.start)))"
        guard case .object = node.value else {
            rejectScan(node, reason: "\(where_) is \(node.kindDescription), not an object with \"scanId\" and \"books\"; "
                + "skipped, the other scans are imported")
            return
        }
        let name: String
        switch node["scanId"]?.value {
        case .string(let text)? where !text.isEmpty: name = text
        case nil, .null?, .string?:
            rejectScan(node, reason: "\(where_) has no \"scanId\"; skipped, the other scans are imported. "
                + "Give each scan a text \"scanId\"")
            return
        case .some:
            let value = node["scanId"].map { Self.text(of: $0, in: bytes, limit: 40) } ?? ""
            rejectScan(node, reason: "\(where_): \"scanId\" is \(node["scanId"]?.kindDescription ?? "") (\(value)), not text; "
                + "skipped, the other scans are imported. Write the scan id in double quotes")
            return
        }
        let named = "scan \"\(name)\" (scan \(ordinal), \(place(node.start)))"
        var photo: String?
        switch node["originalImagePath"]?.value {
        case .string(let path)?: photo = path
        case nil, .null?: break
        case .some:
            rejectScan(node, reason: "\(named): \"originalImagePath\" is "
                + "\(node["originalImagePath"]?.kindDescription ?? ""), not a path; skipped, the other scans are imported. "
                + "Write the photo's path in double quotes, relative to the scan file's folder")
            return
        }
        guard let books = node["books"] else {
            rejectScan(node, reason: "\(named) has no \"books\" list; skipped, the other scans are imported")
            return
        }
        guard case .array(let detections) = books.value else {
            rejectScan(node, reason: "\(named): \"books\" is \(books.kindDescription), not a list of detections; "
                + "skipped, the other scans are imported. Write the detections as a list: \"books\": [{…}, {…}]")
            return
        }
        var metadata = ScanMetadata()
        if let captured = node["capturedAt"] {
            switch captured.value {
            case .string(let text): metadata.capturedAt = text
            case .null: break
            default: metadata.notes.append("\"capturedAt\" is \(captured.kindDescription), not text; ignored")
            }
        }
        metadata.imageWidth = dimension("imageWidth", of: node, notes: &metadata.notes)
        metadata.imageHeight = dimension("imageHeight", of: node, notes: &metadata.notes)
        readScan(name: name, ordinal: ordinal, node: node, detections: detections, photoGiven: photo, metadata: metadata)
    }

    private func dimension(_ key: String, of node: JSONNode, notes: inout [String]) -> Int? {
        guard let value = node[key] else { return nil }
        switch value.value {
        case .null: return nil
        case .number(let number, let lexeme):
            if number.isFinite, number >= 1, number <= 1_000_000, number == number.rounded() { return Int(number) }
            notes.append("\"\(key)\" is \(lexeme), not a whole number of pixels; ignored")
        case .string(let text):
            if let number = PositionedJSONParser.number(inText: text), number >= 1, number <= 1_000_000,
               number == number.rounded() {
                return Int(number)
            }
            notes.append("\"\(key)\" is the text \"\(text.prefix(40))\", not a whole number of pixels; ignored")
        default:
            notes.append("\"\(key)\" is \(value.kindDescription), not a whole number of pixels; ignored")
        }
        return nil
    }

    private mutating func rejectScan(_ node: JSONNode, reason: String) {
        let (line, column) = location(node.start)
        rejected.append(RejectedRow(fileHash: fileHash, file: file, line: line, row: nil, column: column,
                                    reason: reason, rawText: Self.rawText(of: node, in: bytes)))
    }

    // MARK: Detections

    private mutating func readScan(
        name: String, ordinal: Int, node: JSONNode, detections: [JSONNode], photoGiven: String?, metadata: ScanMetadata?
    ) {
        var summary = ScanSummary(
            name: name, ordinal: ordinal, line: location(node.start).line, firstRow: nextRow,
            detectionCount: detections.count, capturedAt: metadata?.capturedAt, imageWidth: metadata?.imageWidth,
            imageHeight: metadata?.imageHeight, photo: nil, photoError: nil, notes: metadata?.notes ?? [])
        var photoFinding: Finding?
        let given = photoGiven ?? options.photo
        if let given {
            do {
                let base = photoGiven == nil ? ScanPhotoPath.absolute(".") : nil
                summary.photo = try ScanPhotoPath.resolve(given, scanFolder: scanFolder, scan: name, file: file,
                                                          relativeTo: base)
            } catch {
                summary.photoError = error
                photoFinding = Finding(code: ScanFindingCode.photoRefused, severity: .warning, field: "photo",
                                       message: error.description + " The detection is kept for text-only review.")
            }
        } else {
            photoFinding = Finding(code: ScanFindingCode.photoMissing, severity: .info, field: "photo",
                                   message: "\(file): scan \"\(name)\" names no photo, so review is text only. "
                                       + "Give the photo with --photo, or as \"originalImagePath\" in the scan.")
        }
        for (offset, detection) in detections.enumerated() {
            let row = nextRow
            nextRow += 1
            if var record = readDetection(detection, scan: name, index: offset + 1, row: row, photo: summary.photo) {
                if let photoFinding { record.addFinding(photoFinding) }
                records.append(record)
            }
        }
        scans.append(summary)
    }

    /// Reads one detection through ``ScanDetectionRules`` (the one rule for detections from a file
    /// or from the vision backend); a detection that cannot be a record is added to ``rejected``.
    private mutating func readDetection(
        _ node: JSONNode, scan: String, index: Int, row: Int, photo: ResolvedScanPhoto?
    ) -> BookRecord? {
        let (line, column) = location(node.start)
        let origin = RecordOrigin(file: file, fileHash: fileHash, row: row, line: line, format: "scan",
                                  rawFields: [Self.text(of: node, in: bytes)], scan: scan)
        switch ScanDetectionRules.record(node, named: "detection \(index) of scan \"\(scan)\"", origin: origin,
                                         photoPath: photo?.path, index: index) {
        case .success(let record):
            return record
        case .failure(let rejection):
            rejected.append(RejectedRow(fileHash: fileHash, file: file, line: line, row: row, column: column,
                                        reason: rejection.reason, rawText: Self.rawText(of: node, in: bytes)))
            return nil
        }
    }

    /// The node's text exactly as in the file.
    static func text(of node: JSONNode, in bytes: [UInt8]) -> String {
        String(decoding: bytes[node.start..<node.end], as: UTF8.self)
    }

    /// The node's text, cut to `limit` characters.
    static func text(of node: JSONNode, in bytes: [UInt8], limit: Int) -> String {
        let end = min(node.end, node.start + limit * 4)
        let text = String(decoding: bytes[node.start..<end], as: UTF8.self)
        return text.count > limit || end < node.end ? String(text.prefix(limit)) + "…" : text
    }

    /// The node's text for a rejected row, cut to ``RejectedRow/rawTextLimit`` bytes on a
    /// character boundary.
    static func rawText(of node: JSONNode, in bytes: [UInt8]) -> String {
        var end = min(node.end, node.start + RejectedRow.rawTextLimit)
        while end > node.start, end < bytes.count, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return String(decoding: bytes[node.start..<end], as: UTF8.self)
    }
}
