import BookpipeCore

/// Turns one row's fields into a ``BookRecord`` by column index (no per-row dictionaries).
final class RecordBuilder: Sendable {
    let map: FieldMap
    let formatName: String
    let file: String
    let fileHash: String
    /// Header names for findings (duplicates renamed `Name#2`).
    let columnNames: [String]

    /// The list the file is an export of, and the column of its ids: a row with an id gets its
    /// list entry here (``BookRecord/listEntry``); the store step gives the others theirs.
    let list: String?
    let entryColumn: Int?
    /// `<list>` U+001F `id:`, the start of every entry made here.
    private let entryPrefix: String

    init(map: FieldMap, formatName: String, file: String, fileHash: String, columnNames: [String],
         list: String? = nil, entryColumn: Int? = nil) {
        self.list = list
        self.entryColumn = entryColumn
        self.entryPrefix = (list ?? "") + String(ListIdentity.separator) + "id:"
        self.map = map
        self.formatName = formatName
        self.file = file
        self.fileHash = fileHash
        self.columnNames = columnNames
    }

    /// True when the row has something to identify the book by: a title, or (for formats
    /// without titles) one of the key columns.
    func isUsable(_ fields: RowFields) -> Bool {
        if let title = map.title {
            return fields.hasNonSpace(title)
        }
        return map.keys.contains { fields.hasNonSpace($0) }
    }

    /// Appends the record of one row to `records`.
    ///
    /// Every value is computed first and the record built by one initialiser call straight into
    /// the array: setting the values one by one on a record, or returning the record, made the
    /// compiler copy all of it once more (2 % of an import).
    /// - Returns: True when a date cell is not a valid year-first date (`2024/01/15`, kept as
    ///   written): the reader then reads it (``CSVRecordReader``, ``ReadDate``).
    @discardableResult
    func appendRecord(fields: RowFields, row: Int, line: Int, to records: inout [BookRecord]) -> Bool {
        let title = map.title.map { fields.string($0) } ?? ""
        var authors: [String] = []
        authors.reserveCapacity(map.authors.count)
        for column in map.authors {
            if fields.isEmpty(column.index) { continue }
            if let separator = column.split {
                authors += fields.splitTrimmed(column.index, by: separator)
            } else if fields.hasNonSpace(column.index) {
                authors.append(fields.string(column.index))
            }
        }
        var rawISBNs: [String] = []
        rawISBNs.reserveCapacity(map.isbns.count)
        for column in map.isbns where !fields.isEmpty(column.index) {
            // A single ISBN per cell is judged in the row's bytes; only a kept value becomes a string.
            if case .single = column.style, let keep = fields.isKeptISBNCell(column.index) {
                if keep { rawISBNs.append(fields.string(column.index)) }
                continue
            }
            Self.appendISBNs(fields.string(column.index), style: column.style, to: &rawISBNs)
        }
        // Numbers are read from the bytes when the cell is ASCII (no string is made for them).
        var year: Int?
        for index in map.years where !fields.isEmpty(index) {
            let ascii = fields.asciiBytes(index)
            if let found = ascii.map({ Self.year(asciiBytes: $0) }) ?? Self.year(fields.string(index)) {
                year = found
                break
            }
        }
        var pageCount: Int?
        if let pages = map.pages, !fields.isEmpty(pages) {
            let ascii = fields.asciiBytes(pages)
            pageCount = ascii.map { Self.leadingInteger($0) } ?? Self.leadingInteger(fields.string(pages))
        }
        var rating: Double?
        if let column = map.rating, !fields.isEmpty(column) {
            let ascii = fields.asciiBytes(column)
            let isZero = ascii.map { $0.count == 1 && $0[0] == UInt8(ascii: "0") } ?? false
            if !isZero { rating = Self.rating(fields.string(column)) }
        }
        var findings: [Finding] = []
        if !title.hasNonSpace {
            if map.title == nil {
                findings.append(Finding(
                    code: "title.missing", severity: .info, field: "title",
                    message: "The \(formatName) export has no titles; enrichment looks the book up by its "
                        + "key (\(map.keys.map { columnNames[$0] }.joined(separator: ", "))) in the raw fields."))
            } else {
                findings.append(Finding(
                    code: "title.missing", severity: .warning, field: columnNames[map.title ?? 0],
                    message: "The row has no title; enrichment can only use its ISBN or author."))
            }
        }
        let record = BookRecord(
            origin: RecordOrigin(
                file: file, fileHash: fileHash, row: row, line: line, format: formatName,
                rawFields: fields.rawFields),
            title: title, authors: authors, rawISBNs: rawISBNs, year: year,
            publisher: fields.optionalString(map.publisher), pageCount: pageCount,
            shelf: fields.optionalString(map.shelf), rating: rating,
            dateAdded: fields.optionalString(map.dateAdded), dateRead: fields.optionalString(map.dateRead),
            binding: fields.optionalString(map.binding), review: fields.optionalString(map.review),
            tags: map.tags.map { Self.tags(fields, $0) } ?? [], findings: findings, listEntry: entry(fields))
        records.append(consume record)
        return Self.needsReading(fields, map.dateAdded) || Self.needsReading(fields, map.dateRead)
    }

    /// The row's list entry when it has a list id (``ListIdentity/entry(of:list:idColumn:)``).
    private func entry(_ fields: RowFields) -> String? {
        guard list != nil, let column = entryColumn, fields.hasNonSpace(column) else { return nil }
        return fields.trimmedString(column, prefixedBy: entryPrefix)
    }

    /// The tags of a tag cell, split and trimmed; empty for an empty cell (no allocation).
    static func tags(_ fields: RowFields, _ column: (index: Int, split: String?)) -> [String] {
        guard fields.hasNonSpace(column.index) else { return [] }
        guard let separator = column.split else { return [fields.string(column.index).trimmingSpaces] }
        return fields.splitTrimmed(column.index, by: separator)
    }

    /// True when a date cell is there and is not a valid year-first date (no allocation).
    @inline(__always)
    static func needsReading(_ fields: RowFields, _ column: Int?) -> Bool {
        guard let column, !fields.isEmpty(column) else { return false }
        guard let bytes = fields.asciiBytes(column) else { return true }
        return !ReadDate.isValidYearFirst(bytes)
    }

    /// A positive rating, or nil (unrated, or not a number). `0`, the usual "unrated", is read
    /// without parsing.
    static func rating(_ text: String) -> Double? {
        if text == "0" { return nil }
        guard let rating = Double(text.trimmingSpaces), rating > 0 else { return nil }
        return rating
    }

    /// Adds every non-empty ISBN-like value of a cell (kept as read; `=""` and blanks are skipped).
    static func appendISBNs(_ value: String, style: ISBNCellStyle, to isbns: inout [String]) {
        if value.isEmpty { return }
        switch style {
        case .single:
            let trimmed = value.trimmingSpaces
            if !trimmed.isEmpty && trimmed != "=\"\"" { isbns.append(value) }
        case .list(let separator):
            isbns += value.splitTrimmed(by: separator)
        case .prefixed(let prefix, let separator):
            for trimmed in value.splitTrimmed(by: separator) {
                if trimmed.lowercased().hasPrefix(prefix) {
                    let isbn = String(trimmed.dropFirst(prefix.count))
                    if !isbn.isEmpty { isbns.append(isbn) }
                }
            }
        }
    }

    /// The year at the start of a cell (`2019`, `-500`, `2019-03-05T01:00:00+01:00`); nil when
    /// there is none, and for Calibre's "undefined" date `0101-01-01`.
    static func year(_ value: String) -> Int? {
        if value.isEmpty || value.hasPrefix("0101-01-01") { return nil }
        return leadingYear(value.utf8)
    }

    /// ``year(_:)`` of an ASCII cell's bytes, without making a string.
    static func year(asciiBytes bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        if bytes.isEmpty || bytes.starts(with: "0101-01-01".utf8) { return nil }
        return leadingYear(bytes)
    }

    private static func leadingYear<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int? {
        var digits = 0
        var result = 0
        var negative = false
        for byte in bytes {
            if byte == UInt8(ascii: " ") && digits == 0 && !negative { continue }
            if byte == UInt8(ascii: "-") && digits == 0 && !negative {
                negative = true
                continue
            }
            guard byte >= 0x30 && byte <= 0x39, digits < 4 else { break }
            result = result * 10 + Int(byte - 0x30)
            digits += 1
        }
        guard digits > 0, result != 0 else { return nil }
        return negative ? -result : result
    }

    /// The integer at the start of a cell (`590 `, `352 pages`); nil when there is none.
    static func leadingInteger(_ value: String) -> Int? { leadingInteger(value.utf8) }

    /// ``leadingInteger(_:)`` of a cell's bytes.
    static func leadingInteger<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Int? {
        var digits = 0
        var result = 0
        for byte in bytes {
            if byte == UInt8(ascii: " ") && digits == 0 { continue }
            guard byte >= 0x30 && byte <= 0x39, digits < 9 else { break }
            result = result * 10 + Int(byte - 0x30)
            digits += 1
        }
        return digits > 0 ? result : nil
    }
}
