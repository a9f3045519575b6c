import BookpipeEnrichment
import Foundation

/// One line of an Open Library dump, parsed: `type \t key \t revision \t last_modified \t JSON`.
///
/// Open Library's data is irregular (author references as objects or bare strings, page counts
/// as numbers or strings, free-text dates), so decoding is lenient: a field of an unexpected
/// shape is treated as absent. Only what makes the line unusable is an error: too few fields,
/// a bad revision, invalid JSON, a key that disagrees with the JSON, a missing title or name.
enum DumpRecord: Sendable {
    case author(AuthorRecord)
    case work(WorkRecord)
    case edition(EditionRecord)
    /// `/type/delete` or `/type/redirect`: the key holds no record any more (from this revision on).
    case removal(key: String, revision: Int, lastModified: String)
    /// Any other type (`/type/subject`, `/type/page`, …): ignored.
    case other(type: String)

    struct Header: Sendable {
        var type: String
        var key: String
        var revision: Int
        var lastModified: String
    }

    struct AuthorRecord: Sendable {
        var header: Header
        var name: String
        var alternateNames: [String]
    }

    struct WorkRecord: Sendable {
        var header: Header
        var title: String
        var subtitle: String?
        var firstPublishYear: Int?
        var authorKeys: [String]
    }

    struct EditionRecord: Sendable {
        var header: Header
        var title: String
        var subtitle: String?
        var workKey: String?
        var authorKeys: [String]
        var isbn10s: [String]
        var isbn13s: [String]
        var publishYear: Int?
        var pageCount: Int?
        var publishers: [String]
    }

    /// Why a line was skipped.
    struct Problem: Error {
        var reason: CatalogSkipReason
        var detail: String
    }

    private static let tab = UInt8(ascii: "\t")

    /// True when the line's first field looks like a record type (`/type/…`): used to tell a dump
    /// from some other file.
    static func looksLikeDumpLine(_ line: ArraySlice<UInt8>) -> Bool {
        line.starts(with: "/type/".utf8) && line.contains(tab)
    }

    /// Parses one line, reading its JSON with ``DumpJSONScanner``.
    static func parse(_ line: ArraySlice<UInt8>) -> Result<DumpRecord, Problem> {
        parse(line) { json in
            do throws(DumpJSONScanner.SyntaxError) {
                return .success(try DumpJSONScanner.record(from: json))
            } catch {
                let column = line[line.startIndex..<min(error.offset, line.endIndex)].count { $0 & 0xC0 != 0x80 } + 1
                return .failure(Problem(reason: .invalidJSON,
                                        detail: "the JSON field is not valid JSON at column \(column): \(error.reason)"))
            }
        }
    }

    /// Parses one line, reading its JSON with `JSONDecoder`: the readable specification of
    /// ``parse(_:)``, which the scanner's tests compare with.
    static func parse(_ line: ArraySlice<UInt8>, decoder: JSONDecoder) -> Result<DumpRecord, Problem> {
        parse(line) { json in
            do {
                return .success(try decoder.decode(RecordJSON.self, from: Data(json)))
            } catch {
                return .failure(Problem(reason: .invalidJSON, detail: "the JSON field is not valid JSON (\(describe(error)))"))
            }
        }
    }

    /// Parses one line's header and, with `readJSON`, its JSON.
    private static func parse(
        _ line: ArraySlice<UInt8>, readJSON: (ArraySlice<UInt8>) -> Result<RecordJSON, Problem>
    ) -> Result<DumpRecord, Problem> {
        // The first four fields are tab-separated; everything after the fourth tab is JSON.
        var fields: [ArraySlice<UInt8>] = []
        fields.reserveCapacity(4)
        var fieldStart = line.startIndex
        var index = line.startIndex
        while fields.count < 4, index < line.endIndex {
            if line[index] == tab {
                fields.append(line[fieldStart..<index])
                fieldStart = index + 1
            }
            index += 1
        }
        guard fields.count == 4 else {
            let found = line.isEmpty ? 0 : fields.count + 1
            return .failure(Problem(
                reason: .wrongFieldCount,
                detail: "expected 5 tab-separated fields (type, key, revision, last_modified, JSON), found \(found)"))
        }
        let json = line[fieldStart...]
        let type = String(decoding: fields[0], as: UTF8.self)
        let key = String(decoding: fields[1], as: UTF8.self)
        guard type.hasPrefix("/type/") else {
            return .failure(Problem(reason: .notARecordType, detail: "the first field \"\(shorten(type))\" is not a record type (/type/…)"))
        }
        guard !key.isEmpty, key.hasPrefix("/") else {
            return .failure(Problem(reason: .missingKey, detail: "the key field \"\(shorten(key))\" is not an Open Library key"))
        }
        guard let revision = Int(String(decoding: fields[2], as: UTF8.self)), revision >= 0 else {
            return .failure(Problem(
                reason: .invalidRevision,
                detail: "the revision \"\(shorten(String(decoding: fields[2], as: UTF8.self)))\" is not a number"))
        }
        let header = Header(type: type, key: key, revision: revision,
                            lastModified: String(decoding: fields[3], as: UTF8.self))
        switch type {
        case "/type/author", "/type/work", "/type/edition":
            break
        case "/type/delete", "/type/redirect":
            return .success(.removal(key: key, revision: revision, lastModified: header.lastModified))
        default:
            return .success(.other(type: type))
        }
        let body: RecordJSON
        switch readJSON(json) {
        case .success(let read): body = read
        case .failure(let problem): return .failure(problem)
        }
        if let jsonKey = body.key, jsonKey != key {
            return .failure(Problem(reason: .keyMismatch, detail: "the key field says \(key) but the JSON says \(shorten(jsonKey))"))
        }
        switch type {
        case "/type/author":
            guard let name = clean(body.name) ?? clean(body.personalName) else {
                return .failure(Problem(reason: .missingTitle, detail: "author \(key) has no name"))
            }
            return .success(.author(AuthorRecord(header: header, name: name,
                                                 alternateNames: body.alternateNames.compactMap(clean))))
        case "/type/work":
            guard let title = clean(body.title) else {
                return .failure(Problem(reason: .missingTitle, detail: "work \(key) has no title"))
            }
            return .success(.work(WorkRecord(
                header: header, title: title, subtitle: clean(body.subtitle),
                firstPublishYear: year(in: body.firstPublishDate), authorKeys: unique(body.authors))))
        default:
            guard let title = clean(body.title) else {
                return .failure(Problem(reason: .missingTitle, detail: "edition \(key) has no title"))
            }
            return .success(.edition(EditionRecord(
                header: header, title: title, subtitle: clean(body.subtitle), workKey: body.works.first,
                authorKeys: unique(body.authors), isbn10s: body.isbn10s, isbn13s: body.isbn13s,
                publishYear: year(in: body.publishDate), pageCount: body.numberOfPages.flatMap { $0 > 0 ? $0 : nil },
                publishers: body.publishers.compactMap(clean))))
        }
    }

    /// The first plausible four-digit year in a free-text date (`"March 1990"`, `"c1985"`, `"1990?"`).
    static func year(in text: String?) -> Int? {
        guard let text else { return nil }
        let bytes = Array(text.utf8)
        var index = 0
        while index + 4 <= bytes.count {
            let isDigit = { (byte: UInt8) in byte >= 0x30 && byte <= 0x39 }
            if bytes[index..<(index + 4)].allSatisfy(isDigit),
               index == 0 || !isDigit(bytes[index - 1]),
               index + 4 == bytes.count || !isDigit(bytes[index + 4]) {
                let value = bytes[index..<(index + 4)].reduce(0) { $0 * 10 + Int($1 - 0x30) }
                if (1000...2100).contains(value) { return value }
            }
            index += 1
        }
        return nil
    }

    /// The text without leading and trailing white space and newlines; nil when nothing is left.
    static func clean(_ text: String?) -> String? {
        guard let text else { return nil }
        // Most values have nothing to trim: Foundation's trimming (through NSString) was 4 % of an
        // import's CPU, so it runs only when an end is blank.
        if let first = text.unicodeScalars.first, let last = text.unicodeScalars.last, !isBlank(first), !isBlank(last) {
            return text
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// True for a scalar that `trimmingCharacters(in: .whitespacesAndNewlines)` removes.
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII ? scalar.value == 0x20 || (0x09...0x0D).contains(scalar.value)
            : CharacterSet.whitespacesAndNewlines.contains(scalar)
    }

    private static func unique(_ keys: [String]) -> [String] {
        var seen = Set<String>()
        return keys.filter { seen.insert($0).inserted }
    }

    private static func shorten(_ text: String) -> String {
        text.count > 60 ? String(text.prefix(60)) + "…" : text
    }

    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
             .valueNotFound(_, let context):
            if let underlying = context.underlyingError as NSError?,
               let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String {
                return detail
            }
            return context.debugDescription
        @unknown default:
            return "\(error)"
        }
    }
}

/// Why a dump line was skipped.
public enum CatalogSkipReason: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// Fewer than five tab-separated fields.
    case wrongFieldCount = "wrong-field-count"
    /// The first field is not `/type/…`.
    case notARecordType = "not-a-record-type"
    /// The key field is empty or not an Open Library key.
    case missingKey = "missing-key"
    /// The revision field is not a number.
    case invalidRevision = "invalid-revision"
    /// The JSON field does not parse.
    case invalidJSON = "invalid-json"
    /// The JSON's `key` differs from the key field.
    case keyMismatch = "key-mismatch"
    /// An edition or work without a title, or an author without a name.
    case missingTitle = "missing-title"
    /// The line is longer than the reader keeps (64 MiB).
    case lineTooLong = "line-too-long"

    /// The reason in words.
    public var description: String {
        switch self {
        case .wrongFieldCount: return "not 5 tab-separated fields"
        case .notARecordType: return "first field is not a record type"
        case .missingKey: return "no usable key"
        case .invalidRevision: return "revision is not a number"
        case .invalidJSON: return "invalid JSON"
        case .keyMismatch: return "key differs from the JSON's key"
        case .missingTitle: return "no title (or author name)"
        case .lineTooLong: return "line too long"
        }
    }
}

/// The fields bookpipe reads from any record's JSON, decoded leniently: by ``DumpJSONScanner``
/// on imports, by `JSONDecoder` (`init(from:)`, the specification) in tests.
struct RecordJSON: Equatable {
    var key: String?
    var title: String?
    var subtitle: String?
    var name: String?
    var personalName: String?
    var alternateNames: [String] = []
    var works: [String] = []
    var authors: [String] = []
    var isbn10s: [String] = []
    var isbn13s: [String] = []
    var publishDate: String?
    var firstPublishDate: String?
    var numberOfPages: Int?
    var publishers: [String] = []

    enum CodingKeys: String, CodingKey {
        case key, title, subtitle, name, works, authors, publishers
        case personalName = "personal_name"
        case alternateNames = "alternate_names"
        case isbn10s = "isbn_10"
        case isbn13s = "isbn_13"
        case publishDate = "publish_date"
        case firstPublishDate = "first_publish_date"
        case numberOfPages = "number_of_pages"
    }
}

extension RecordJSON: Decodable {
    init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func string(_ key: CodingKeys) -> String? {
            (try? container.decodeIfPresent(LenientString.self, forKey: key))?.flatMap(\.value)
        }
        func strings(_ key: CodingKeys) -> [String] {
            ((try? container.decodeIfPresent(LenientArray<LenientString>.self, forKey: key)) ?? nil)?
                .elements.compactMap(\.value) ?? []
        }
        func references(_ key: CodingKeys) -> [String] {
            ((try? container.decodeIfPresent(LenientArray<KeyReference>.self, forKey: key)) ?? nil)?
                .elements.compactMap(\.key) ?? []
        }
        key = string(.key)
        title = string(.title)
        subtitle = string(.subtitle)
        name = string(.name)
        personalName = string(.personalName)
        alternateNames = strings(.alternateNames)
        works = references(.works)
        authors = references(.authors)
        isbn10s = strings(.isbn10s)
        isbn13s = strings(.isbn13s)
        publishDate = string(.publishDate)
        firstPublishDate = string(.firstPublishDate)
        numberOfPages = (try? container.decodeIfPresent(LenientInt.self, forKey: .numberOfPages))?.flatMap(\.value)
        publishers = strings(.publishers)
    }
}

/// A string, or nil for any other JSON value (numbers are written as text).
private struct LenientString: Decodable {
    var value: String?
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            value = text
        } else if let number = try? container.decode(Int.self) {
            value = String(number)
        } else {
            value = nil
        }
    }
}

/// An integer written as a number or as text; nil otherwise.
private struct LenientInt: Decodable {
    var value: Int?
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(Int.self) {
            value = number
        } else if let number = try? container.decode(Double.self), number.isFinite, abs(number) < 1e9 {
            value = Int(number)
        } else if let text = try? container.decode(String.self) {
            value = Int(text.trimmingCharacters(in: .whitespaces))
        } else {
            value = nil
        }
    }
}

/// A reference to another record in any of the shapes Open Library uses:
/// `{"key": "/works/OL1W"}`, `"/authors/OL1A"`, `{"author": {"key": "/authors/OL1A"}, "type": …}`
/// or `{"author": "/authors/OL1A"}`.
private struct KeyReference: Decodable {
    var key: String?

    private enum CodingKeys: String, CodingKey { case key, author }

    init(from decoder: any Decoder) throws {
        // Objects are the common shape: try them first (a failed attempt costs an error value).
        if let container = try? decoder.container(keyedBy: CodingKeys.self) {
            if let direct = try? container.decodeIfPresent(String.self, forKey: .key) {
                key = direct
            } else if let author = try? container.decodeIfPresent(KeyReference.self, forKey: .author) {
                key = author.key
            } else {
                key = nil
            }
        } else if let text = try? decoder.singleValueContainer().decode(String.self) {
            key = text
        } else {
            key = nil
        }
        if key?.isEmpty == true { key = nil }
    }
}

/// An array whose elements that fail to decode are skipped; any non-array value is empty.
private struct LenientArray<Element: Decodable>: Decodable {
    var elements: [Element] = []

    /// Decodes any value, to step over an element that failed.
    private struct Skip: Decodable {
        init(from decoder: any Decoder) throws {}
    }

    init(from decoder: any Decoder) throws {
        guard var container = try? decoder.unkeyedContainer() else { return }
        if let count = container.count { elements.reserveCapacity(count) }
        while !container.isAtEnd {
            if let element = try? container.decode(Element.self) {
                elements.append(element)
            } else if (try? container.decode(Skip.self)) == nil {
                break
            }
        }
    }
}
