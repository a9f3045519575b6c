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
}
