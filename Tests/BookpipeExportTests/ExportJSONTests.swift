import BookpipeCore
import Foundation
import Testing
@testable import BookpipeExport

@Suite struct ExportJSONTests {
    /// Strings with everything JSON must escape, and things it must not (slashes, DEL, U+2028,
    /// emoji, right-to-left text).
    static let awkwardStrings = [
        "", "plain", "He said \"no\" \\ / back", "tab\there\u{8}bell\u{C}form\u{1}one\u{1F}unit\u{7F}del",
        "line\nbreak\r\nand \u{2028} separator", "Ünïcödé 📚", "שלום עולם", "\u{0}nul",
    ]

    @Test("Strings are escaped exactly as JSONSerialization escapes them", arguments: awkwardStrings)
    func strings(_ text: String) throws {
        let written = ExportJSON.text(.strings([text]))
        #expect(try ExportSamples.canonicalJSON(written) == written)
        #expect(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String] == [text])
    }

    @Test("Numbers are written in JSONSerialization's shortest form; NaN and infinities become null",
          arguments: [(0.42, "0.42"), (3.0, "3"), (1e-07, "1e-07"), (-0.0, "-0"), (1e21, "1e+21"),
                      (Double.nan, "null"), (Double.infinity, "null"), (-Double.infinity, "null")])
    func doubles(_ number: Double, _ expected: String) throws {
        #expect(ExportJSON.text(.double(number)) == expected)
        if number.isFinite {
            let serialized = try JSONSerialization.data(withJSONObject: [number])
            #expect(String(decoding: serialized, as: UTF8.self) == "[\(expected)]")
        }
    }

    @Test("Integers, booleans, null and nesting are written without spaces")
    func nesting() {
        let value = ExportJSON.Value.array([.int(-12), .int(Int.min), .bool(true), .bool(false), .null,
                                            .object([("b", .strings([])), ("a", .array([]))])])
        #expect(ExportJSON.text(value) == #"[-12,-9223372036854775808,true,false,null,{"a":[],"b":[]}]"#)
    }

    /// Keys whose order differs between a plain byte sort and `JSONSerialization`'s `.sortedKeys`,
    /// within what ``ExportJSON/precedes(_:_:)`` promises: ASCII letters and digits, starting with a
    /// letter, no two differing only in case or in leading zeros.
    static let awkwardKeys = ["item10", "item2", "Item1", "b", "A", "z9", "z10", "seriesNumber", "series", "source",
                              "isbn13", "isbn", "ISBN10", "editionKey", "id", "index", "normalizedTitle", "Zeta"]

    @Test("Object keys are sorted as JSONSerialization sorts them: case-insensitively, digit runs as numbers")
    func keyOrder() throws {
        let written = ExportJSON.text(.object(Self.awkwardKeys.enumerated().map { ($0.element, .int($0.offset)) }))
        #expect(try ExportSamples.canonicalJSON(written) == written)
        func position(_ key: String) -> String.Index? { written.range(of: "\"\(key)\":")?.lowerBound }
        #expect(try #require(position("item2")) < #require(position("item10")))
        #expect(try #require(position("z9")) < #require(position("z10")))
        #expect(try #require(position("A")) < #require(position("b")))
    }

    @Test("precedes is a strict order: irreflexive, and exactly one of two different keys comes first",
          arguments: awkwardKeys)
    func strictOrder(_ key: String) {
        #expect(!ExportJSON.precedes(key, key))
        for other in Self.awkwardKeys where other != key {
            #expect(ExportJSON.precedes(key, other) != ExportJSON.precedes(other, key), "\(key) vs \(other)")
        }
    }

    /// Every object inside `value` (itself included), depth first, except a candidate's score
    /// breakdown: it comes from a dictionary, in no particular order, and is sorted when written.
    static func objects(in value: ExportJSON.Value) -> [[(String, ExportJSON.Value)]] {
        switch value {
        case .object(let members): [members] + members.filter { $0.0 != "breakdown" }.flatMap { objects(in: $0.1) }
        case .array(let items): items.flatMap { objects(in: $0) }
        default: []
        }
    }

    /// `value` with every object's members reversed, so that writing it must sort them.
    static func reversed(_ value: ExportJSON.Value) -> ExportJSON.Value {
        switch value {
        case .object(let members): .object(members.reversed().map { ($0.0, reversed($0.1)) })
        case .array(let items): .array(items.map(reversed))
        default: value
        }
    }

    static let records = [ExportSamples.everyField, ExportSamples.enrichedDune, ExportSamples.uncertainScan,
                          ExportSamples.pendingRow]

    @Test("The contract builds its objects in key order, so the writer writes them without sorting",
          arguments: records)
    func contractObjectsInKeyOrder(_ record: BookRecord) {
        let objects = Self.objects(in: ExportContract.value(record))
        #expect(objects.count >= 2)
        for members in objects {
            #expect(ExportJSON.isSorted(members), "\(members.map(\.0))")
        }
    }

    @Test("Objects written as given and objects that had to be sorted are the same bytes, JSONSerialization's",
          arguments: records)
    func sortedAndUnsortedWriteAlike(_ record: BookRecord) throws {
        let value = ExportContract.value(record)
        let unsorted = Self.reversed(value)
        #expect(Self.objects(in: unsorted).contains { !ExportJSON.isSorted($0) })
        let written = ExportJSON.text(value)
        #expect(ExportJSON.text(unsorted) == written)
        #expect(try ExportSamples.canonicalJSON(written) == written)
    }

    @Test("A record with every field set writes every key the contract documents")
    func everyFieldKeys() throws {
        let text = ExportContract.jsonText(ExportSamples.everyField)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(object.keys) == [
            "authors", "binding", "candidates", "confidence", "dateAdded", "dateRead", "failure", "findings", "format",
            "id", "isbn13", "match", "normalizedTitle", "pages", "publisher", "rating", "rawISBNs", "review",
            "reviewStatus", "series", "seriesNumber", "shelf", "source", "status", "tags", "title", "year",
        ])
    }
}
