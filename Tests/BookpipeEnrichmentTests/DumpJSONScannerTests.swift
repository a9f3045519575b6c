import Foundation
import Testing
@testable import BookpipeCatalog

/// The dump's field scanner against its specification (`JSONDecoder` with `RecordJSON.init(from:)`):
/// the same record from every line that decodes, a rejection of every line that does not, and
/// errors that say where.
@Suite struct DumpJSONScannerTests {
    /// Both readings of one JSON field: the scanner's, and the specification's.
    private func bothReadings(_ json: String) -> (scanned: Result<RecordJSON, DumpJSONScanner.SyntaxError>, decoded: RecordJSON?) {
        let bytes = Array(json.utf8)
        let scanned = Result { () throws(DumpJSONScanner.SyntaxError) in try DumpJSONScanner.record(from: bytes[...]) }
        return (scanned, try? JSONDecoder().decode(RecordJSON.self, from: Data(bytes)))
    }

    @Test("Every line of the sample dump reads as JSONDecoder reads it")
    func sampleDump() throws {
        let lines = try CatalogSamples.dumpLines()
        #expect(lines.count > 250)
        for line in lines {
            let json = String(line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)[4])
            let (scanned, decoded) = bothReadings(json)
            #expect(try scanned.get() == #require(decoded), "\(json)")
        }
        // And whole lines give the same records through both parsers.
        for line in lines {
            let bytes = Array(line.utf8)[...]
            #expect("\(DumpRecord.parse(bytes))" == "\(DumpRecord.parse(bytes, decoder: JSONDecoder()))")
        }
    }

    static let oddShapes: [String] = [
        // References in every shape, and values that are not references.
        #"{"authors": ["/authors/OL1A", {"key": "/authors/OL2A"}, {"author": {"key": "/authors/OL3A"}}, {"author": "/authors/OL4A"}, 7, null, [], {}, {"key": ""}, {"key": 5, "author": "/authors/OL5A"}, {"key": null, "author": {"author": "/authors/OL6A"}}, {"key": "", "author": "/authors/OL7A"}, {"type": {"key": "/type/author_role"}, "author": {"key": "/authors/OL8A"}}]}"#,
        #"{"works": {"key": "/works/OL1W"}, "authors": "/authors/OL1A"}"#,
        #"{"works": [{"key": "/works/OL1W", "extra": [1, 2, {"a": [true, false, null]}]}]}"#,
        // Strings that are numbers, numbers that are strings, and other values.
        #"{"title": 1984, "subtitle": 12.0, "name": 12.5, "personal_name": true, "publish_date": null, "first_publish_date": {"year": 1990}}"#,
        #"{"title": -0, "subtitle": 1e2, "name": 99999999999999999999, "personal_name": -12}"#,
        #"{"isbn_10": ["0441478123", 12, null, 3.5, ["x"], "x"], "isbn_13": "9780441478125", "publishers": ["Ace", {"name": "Ace"}]}"#,
        #"{"alternate_names": [], "publishers": {}, "isbn_13": []}"#,
        // Page counts in every shape.
        #"{"number_of_pages": "304"}"#, #"{"number_of_pages": " 304 "}"#, #"{"number_of_pages": 304.9}"#,
        #"{"number_of_pages": "304 pages"}"#, #"{"number_of_pages": -3}"#, #"{"number_of_pages": 1e12}"#,
        #"{"number_of_pages": 2e2}"#, #"{"number_of_pages": [304]}"#, #"{"number_of_pages": null}"#,
        // Escapes, non-ASCII text, whitespace, and a member named with an escape.
        #"{"title": "Caf\u00e9 \"Noir\" \/ \\ \b\f\n\r\t \ud83d\udcda", "subtitle": "Långstrump — ß ø ł 日本"}"#,
        #"{"ti\u0074le": "Escaped name", "description": {"type": "/type/text", "value": "Line\none\u0021"}}"#,
        " \t{ \"title\" : \"Spaced\" , \"works\" : [ { \"key\" : \"/works/OL1W\" } ] }\r ",
        // A member given twice: the first one counts.
        #"{"title": "First", "title": "Second", "works": [{"key": "/works/OL1W"}], "works": []}"#,
        #"{"authors": [{"key": "/authors/OL1A", "key": 5, "author": "/authors/OL2A"}, {"key": 5, "key": "/authors/OL3A"}]}"#,
        // Values that do not decode read as absent, as JSONDecoder reads them; the rest of the line stays.
        "{\"title\": \"Dune\\x\", \"subtitle\": \"\\udcda\", \"name\": \"\\ud83d!\", \"personal_name\": \"Tab\there\"}",
        #"{"description": "bad \q escape", "x": "\uZZZZ", "title": "Dune", "publish_date": "\u0000x"}"#,
        #"{"number_of_pages": 01, "title": 1., "subtitle": -, "name": 1e, "isbn_13": [--1, 1-2, "9780441013593"]}"#,
        #"{"number_of_pages": 99999999999999999999, "title": 1e400}"#, #"{"number_of_pages": 1e400}"#,
        #"{"ti\tle": "Not the title", "works": [{"key": "\x", "author": "/works/OL1W"}]}"#,
        // One trailing comma before a closing bracket, which JSONDecoder accepts.
        #"{"x": {"y": 1,}, "isbn_13": ["9780441013593",], "title": "Dune",}"#,
        // Deep but allowed nesting in a skipped member, and an empty object.
        #"{"x": "# + String(repeating: "[", count: 200) + String(repeating: "]", count: 200) + "}",
        "{}",
    ]

    @Test("Odd but valid shapes read as JSONDecoder reads them", arguments: oddShapes)
    func oddShape(json: String) throws {
        let (scanned, decoded) = bothReadings(json)
        #expect(try scanned.get() == #require(decoded))
    }

    static let malformed: [(json: String, column: Int, reason: String)] = [
        (#"{"key": "/books/OL2M", "title": "#, 33, "the line ends where a value should be"),
        (#"{"key": "/books/OL2M", "title": "Dun"#, 33, "the line ends inside a string"),
        (#"{"key": "/books/OL2M", "title": "Dune""#, 39, "the line ends inside an object"),
        (#"{"authors": [{"key": "/authors/OL1A"}"#, 38, "the line ends inside a list"),
        (#"{"x": "\u12", "title": "A"}"#, 16, "expected ',' or '}' after a member"),
        (#"{"title" "Dune"}"#, 10, "expected ':' after a member name"),
        (#"{title: "Dune"}"#, 2, "expected a member name in quotes"),
        (#"{"title": "Dune",,}"#, 18, "expected a member name in quotes"),
        (#"{,}"#, 2, "expected a member name in quotes"),
        (#"{"a": [,]}"#, 8, "expected a value"),
        (#"{"title": "Dune" "works": []}"#, 18, "expected ',' or '}' after a member"),
        (#"{"isbn_13": ["9780441013593" "9780441013594"]}"#, 30, "expected ',' or ']' after an element"),
        (#"{"n": +1}"#, 7, "expected a value"),
        (#"{"n": .5}"#, 7, "expected a value"),
        (#"{"n": 0x10}"#, 8, "expected ',' or '}' after a member"),
        (#"{"number_of_pages": NaN}"#, 21, "expected a value"),
        (#"{"x": tru}"#, 7, "expected a value"),
        (#"{"x": True}"#, 7, "expected a value"),
        (#"{"title": 'A'}"#, 11, "expected a value"),
        (#"{"title": "Dune"} trailing"#, 19, "unexpected text after the JSON object"),
        (#"{"title": "A"}}"#, 15, "unexpected text after the JSON object"),
        ("{\"title\": \"A\"}\u{0B}", 15, "unexpected text after the JSON object"),
        (#"["not", "an", "object"]"#, 1, "expected a JSON object"),
        ("", 1, "the JSON field is empty"),
        (#"{"x": "# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}", 518,
         "the JSON is nested too deeply"),
    ]

    @Test("Malformed JSON is refused, as JSONDecoder refuses it, with the column and what was expected",
          arguments: malformed)
    func malformedJSON(json: String, column: Int, reason: String) {
        let (scanned, decoded) = bothReadings(json)
        #expect(decoded == nil, "JSONDecoder accepts it")
        let line = "/type/edition\t/books/OL2M\t1\t2026-01-01\t" + json
        let problem = DumpRecord.parse(Array(line.utf8)[...])
        guard case .failure(let error) = scanned, case .failure(let problem) = problem else {
            Issue.record("the scanner accepted \(json)")
            return
        }
        #expect(error.reason == reason)
        #expect(problem.reason == .invalidJSON)
        #expect(problem.detail == "the JSON field is not valid JSON at column \(39 + column): \(reason)")
    }

    @Test("Bytes that are not UTF-8 make a value read absent, are stepped over in a member skipped, and refuse a member name")
    func notUTF8() throws {
        func bytes(_ before: String, _ after: String) -> [UInt8] { Array(before.utf8) + [0x44, 0xFF, 0x65] + Array(after.utf8) }
        for json in [bytes(#"{"title": ""#, #"", "key": "/works/OL1W"}"#), bytes(#"{"notes": ""#, #"", "title": "Dune"}"#),
                     bytes(#"{"title": "Dune", "authors": [{""#, #"": 1, "key": "/authors/OL1A"}, "/authors/OL2A"]}"#),
                     bytes(#"{"title": "Dune", "works": [{"key": "/works/OL1W", "type": {""#, #"": 1}}]}"#)] {
            let scanned = try DumpJSONScanner.record(from: json[...])
            #expect(scanned == (try JSONDecoder().decode(RecordJSON.self, from: Data(json))))
        }
        let name = bytes(#"{""#, #"": "A", "title": "Dune"}"#)
        #expect(throws: DumpJSONScanner.SyntaxError(
            offset: 1, reason: "a member name is not valid text (an escape, a control character or bytes that are not UTF-8)")) {
            try DumpJSONScanner.record(from: name[...])
        }
        #expect((try? JSONDecoder().decode(RecordJSON.self, from: Data(name))) == nil)
    }

    @Test("Values are trimmed of white space and newlines exactly as Foundation trims them", arguments: [
        "Dune", " Dune ", "\u{A0}Dune\u{2003}\n", "\tDune\u{0B}", "\u{85}Dune", "Dune\u{3000}", "Du ne", "", " ", "\u{85}",
        "\u{200B}Dune", "Dune\u{FEFF}", "é", "Dune\r\n",
    ])
    func trimming(text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(DumpRecord.clean(text) == (trimmed.isEmpty ? nil : trimmed))
    }

    @Test("A line whose JSON is cut off is skipped with its file, line and column; the lines around it import")
    func truncatedLineInAnImport() async throws {
        let directory = try CatalogSamples.temporaryDirectory()
        let path = try CatalogSamples.makeDump(in: directory, [
            try CatalogSamples.line(type: "work", key: "/works/OL1W", ["title": "Dune"]),
            "/type/work\t/works/OL2W\t1\t2026-01-01\t{\"key\": \"/works/OL2W\", \"title\": \"Dune Mess",
            "/type/edition\t/books/OL3M\t1\t2026-01-01\t{\"key\": \"/books/OL3M\", \"works\": [{\"key\": \"/works/OL1W\"}]}",
            try CatalogSamples.line(type: "work", key: "/works/OL4W", ["title": "Children of Dune"]),
        ])
        let (catalog, _) = try CatalogSamples.emptyCatalog()
        let summary = try await catalog.import(dumpFile: path)
        #expect(summary.works == 2)
        #expect(summary.problems.map(\.description) == [
            "\(path):2: the JSON field is not valid JSON at column 69: the line ends inside a string; line skipped",
            "\(path):3: edition /books/OL3M has no title; line skipped",
        ])
        #expect(summary.skippedByReason == [.invalidJSON: 1, .missingTitle: 1])
        #expect(try catalog.counts().works == 2)
    }
}
