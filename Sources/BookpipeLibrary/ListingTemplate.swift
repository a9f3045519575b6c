import BookpipeCore
import Foundation

/// How `bookpipe list --format '{title} — {authors} ({year})'` prints a record: the text with
/// each `{field}` replaced by the record's value (empty when it has none); `{{` and `}}` are
/// braces. The same fields name the columns of `--fields title,year` and the keys of `--json`.
public struct ListingTemplate: Sendable, Hashable {
    /// The template's pieces: text as written, or a field.
    public enum Piece: Sendable, Hashable {
        /// Text printed as it is.
        case text(String)
        /// A field's value.
        case field(String)
    }

    /// The pieces, in order.
    public var pieces: [Piece]

    /// The fields a template, `--fields` and `--json` know, in the order help lists them.
    public static let fields = ["number", "id", "shortid", "title", "authors", "year", "isbn", "shelf", "rating",
                                "status", "review", "file", "line", "format", "publisher", "pages", "added", "read", "gone",
                                "book"]

    /// What `list` prints without `--format`.
    public static let standard = "{number}  {shortid}  {status}  {title} — {authors}"

    /// Parses a template.
    /// - Throws: ``LibraryQueryError`` naming an unknown field or an unclosed `{`.
    public init(_ text: String) throws(LibraryQueryError) {
        var pieces: [Piece] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if (character == "{" || character == "}"), next < text.endIndex, text[next] == character {
                literal.append(character)
                index = text.index(after: next)
                continue
            }
            guard character == "{" else {
                literal.append(character)
                index = next
                continue
            }
            guard let close = text[next...].firstIndex(of: "}") else {
                throw LibraryQueryError(token: text, problem: .badValue("a \"{\" is not closed (write {{ for a brace)"))
            }
            let name = text[next..<close].lowercased()
            guard Self.fields.contains(name) else {
                throw LibraryQueryError(token: "{\(text[next..<close])}", problem: .badChoice(Self.fields))
            }
            if !literal.isEmpty { pieces.append(.text(literal)) }
            literal = ""
            pieces.append(.field(name))
            index = text.index(after: close)
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        self.pieces = pieces
    }

    /// A template of these fields separated by two spaces (`--fields title,year`).
    /// - Throws: ``LibraryQueryError`` naming an unknown field.
    public static func columns(_ list: String) throws(LibraryQueryError) -> ListingTemplate {
        let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        for name in names where !fields.contains(name) {
            throw LibraryQueryError(token: name, problem: .badChoice(fields))
        }
        return try ListingTemplate(names.map { "{\($0)}" }.joined(separator: "  "))
    }

    /// The fields the template prints, in order.
    public var fieldNames: [String] {
        pieces.compactMap { if case .field(let name) = $0 { return name } else { return nil } }
    }

    /// The record printed with this template.
    public func render(_ listed: ListedRecord) -> String {
        pieces.map { piece in
            switch piece {
            case .text(let text): return text
            case .field(let name): return Self.value(name, of: listed).map(Self.text) ?? ""
            }
        }.joined()
    }

    /// A field's value as JSON takes it (String, Int, Double, Bool or [String]); nil when the record has none.
    public static func value(_ field: String, of listed: ListedRecord) -> (any Sendable)? {
        let record = listed.record
        switch field {
        case "number": return listed.number
        case "id": return record.id
        case "shortid": return RecordReference.shortID(record.id)
        case "title": return record.title
        case "authors": return record.authors
        case "year": return record.year
        case "isbn": return record.normalized?.isbn13
        case "shelf": return record.shelf
        case "rating": return record.rating
        case "status": return record.status.rawValue
        case "review": return record.reviewStatus.rawValue
        case "file": return record.origin.file
        case "line": return record.origin.line
        case "format": return record.origin.format
        case "publisher": return record.publisher
        case "pages": return record.pageCount
        case "added": return record.dateAdded
        case "read": return record.dateRead
        case "gone": return listed.isGone
        case "book": return listed.book
        default: return nil
        }
    }

    /// A value as text: authors joined by "; ", whole ratings without a decimal point.
    private static func text(_ value: any Sendable) -> String {
        switch value {
        case let list as [String]: return list.joined(separator: "; ")
        case let number as Double: return number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case let flag as Bool: return flag ? "yes" : "no"
        default: return "\(value)"
        }
    }
}
