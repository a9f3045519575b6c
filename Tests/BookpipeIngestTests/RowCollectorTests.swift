import BookpipeCore
import Testing

@testable import BookpipeIngest

@Suite struct RowCollectorTests {
    /// The word-at-a-time scan against the obvious byte loop, for every length up to 40 and the
    /// interesting bytes at every position.
    @Test("The field scan finds non-ASCII bytes and U+001F/U+001B at any position and length")
    func scanAgreesWithByteLoop() {
        let interesting: [UInt8] = [0x1F, 0x1B, 0x1A, 0x1E, 0x1D, 0x3F, 0x5F, 0x9F, 0x80, 0xFF, 0xC3, 0x00, 0x7F]
        for length in 0...40 {
            for position in 0..<max(length, 1) {
                for byte in interesting {
                    var field = (0..<length).map { UInt8(0x41 + $0 % 26) }
                    if length > 0 { field[position] = byte }
                    let expected = (field.allSatisfy { $0 < 0x80 }, field.contains { $0 == 0x1F || $0 == 0x1B })
                    let found = field.withUnsafeBytes { RowCollector.scan($0) }
                    #expect(found.isASCII == expected.0 && found.needsEscaping == expected.1,
                            "length \(length), byte \(byte) at \(position)")
                }
            }
        }
    }

    @Test("The line check finds non-ASCII bytes and U+001F/U+001B as the field scan does")
    func lineCheckAgreesWithScan() {
        let interesting: [UInt8] = [0x1F, 0x1B, 0x1A, 0x1E, 0x3F, 0x9F, 0x80, 0xFF, 0xC3, 0x00, 0x7F, 0x0A]
        for length in 0...80 {
            for position in 0..<max(length, 1) {
                for byte in interesting {
                    var line = (0..<length).map { UInt8(0x41 + $0 % 26) }
                    if length > 0 { line[position] = byte }
                    let scanned = line.withUnsafeBytes { RowCollector.scan($0) }
                    let plain = line.withUnsafeBytes { RowCollector.isPlain($0) }
                    #expect(plain == (scanned.isASCII && !scanned.needsEscaping), "length \(length), \(byte) at \(position)")
                }
            }
        }
    }

    /// The fields libcsv gives for `line` followed by a line feed, and whether it ended the row.
    private static func libcsvFields(_ line: [UInt8], delimiter: UInt8) -> (fields: [String], ended: Bool) {
        let collector = RowCollector(maximumFields: 10_000, fieldLimit: 1 << 20)
        let parser = LibCSVParser(delimiter: delimiter, collector: collector)
        collector.reset()
        let bytes = line + [0x0A]
        _ = bytes.withUnsafeBytes { parser.parse($0.baseAddress!, count: $0.count) }
        return (collector.fields, collector.rowEnded)
    }

    /// The fields `parseWholeLine` gives for `line`, or nil when it leaves the row to libcsv.
    private static func wholeLineFields(_ line: [UInt8], delimiter: UInt8) -> [String]? {
        let collector = RowCollector(maximumFields: 10_000, fieldLimit: 1 << 20)
        let parser = LibCSVParser(delimiter: delimiter, collector: collector)
        collector.reset()
        let parsed = line.withUnsafeBufferPointer { parser.parseWholeLine($0.baseAddress!, count: $0.count) }
        if !parsed {
            #expect(collector.fields.isEmpty && !collector.rowEnded, "nothing is handed over when libcsv is left the row")
            return nil
        }
        #expect(collector.rowEnded)
        return collector.fields
    }

    /// libcsv is the specification of the one-line reading: every line made of the pieces below
    /// (quotes doubled, stray and closing; delimiters inside and outside quotes; spaces, tabs,
    /// non-ASCII), up to four pieces long, and lines from a seeded generator, must give libcsv's
    /// fields, or be left to libcsv exactly when libcsv's row goes on past the line end.
    @Test("A row on one line is read as libcsv reads it, or left to libcsv when it goes on", arguments: [
        UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\t"),
    ])
    func wholeLineAgreesWithLibCSV(delimiter: UInt8) {
        let pieces: [[UInt8]] = [[0x22], [delimiter], Array("a".utf8), Array(" ".utf8), [0x22, 0x22], Array("é".utf8),
                                 [0x09], Array("x\"y".utf8), [0x22, delimiter], [delimiter, 0x22], Array("=\"\"1\"\"".utf8)]
        var lines: [[UInt8]] = [[]]
        for _ in 0..<4 {
            lines = lines + lines.flatMap { line in pieces.map { line + $0 } }.filter { $0.count <= 12 }
        }
        var generator = LineGenerator(state: 20_261_124)
        for _ in 0..<3000 {
            lines.append((0..<Int.random(in: 1...30, using: &generator)).flatMap { _ in
                pieces.randomElement(using: &generator)!
            })
        }
        var checked = 0
        for line in Set(lines) where !line.isEmpty && !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            let expected = Self.libcsvFields(line, delimiter: delimiter)
            let found = Self.wholeLineFields(line, delimiter: delimiter)
            if let found {
                #expect(expected.ended && found == expected.fields, "\(String(decoding: line, as: UTF8.self).debugDescription)")
            } else {
                #expect(!expected.ended, "\(String(decoding: line, as: UTF8.self).debugDescription)")
            }
            checked += 1
        }
        #expect(checked > 10_000)
    }

    @Test("List cells split in the row's bytes give what splitting their strings gives")
    func splitFromBytes() {
        let cells = ["to-read, favorites", "a,b,,c", " , ", "", " single ", "Ö, ü,é", "x\u{1F}y, z", "e\u{1B}, f",
                     "a, b, c", "a,, b", ",,", "tab\t,\nnl", "a||b||", "日本;中文", "éé", "a ,b"]
        for separator in [",", ", ", ";", "||", "é", " "] {
            for cell in cells {
                let collector = RowCollector(maximumFields: 100, fieldLimit: 1 << 20)
                collector.reset()
                for field in ["first", cell, "last"] {
                    var text = field
                    text.withUTF8 { collector.appendField(UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
                }
                #expect(collector.row.splitTrimmed(1, by: separator) == cell.splitTrimmed(by: separator),
                        "\(cell.debugDescription) by \(separator.debugDescription)")
            }
        }
    }

    @Test("Years and page counts read from a cell's bytes equal those read from its string")
    func numbersFromBytes() {
        let cells = ["2019", " 1984", "-500", "2019-03-05T01:00:00+01:00", "0101-01-01", "0101-01-01T00:00:00+00:00",
                     "0101-01-0", "0", "00", "12345", "abc", "-", " ", "352 pages", "590 ", "1234567890", "07",
                     "-0", "2010.0", ""]
        for cell in cells {
            var copy = cell
            copy.withUTF8 { bytes in
                #expect(RecordBuilder.year(asciiBytes: bytes) == RecordBuilder.year(cell), "year of \"\(cell)\"")
                #expect(RecordBuilder.leadingInteger(bytes) == RecordBuilder.leadingInteger(cell), "integer of \"\(cell)\"")
            }
        }
        #expect(RecordBuilder.year("2019-03-05") == 2019 && RecordBuilder.year("0101-01-01") == nil)
        #expect(RecordBuilder.leadingInteger("352 pages") == 352)
    }

    @Test("Fields holding U+001F and U+001B read back exactly, next to plain and Latin-1 fields")
    func controlBytesRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let title = Array("Long title with a unit \u{1F} separator and an \u{1B} escape".utf8)
        let row = Array("title,author,isbn\n".utf8) + title + Array(",Ana \u{1F}B,9780441478125\nPlain,".utf8)
            + [0x4A, 0xF6, 0x72, 0x67] + Array(",\n".utf8)
        let path = try directory.write("control.csv", row)
        let result = try importAll(path)
        #expect(result.records.map(\.title) == [String(decoding: title, as: UTF8.self), "Plain"])
        #expect(result.records.map(\.authors) == [["Ana \u{1F}B"], ["Jörg"]])
        #expect(result.records.first?.origin.rawFields
            == [String(decoding: title, as: UTF8.self), "Ana \u{1F}B", "9780441478125"])
        #expect(result.records.last?.origin.rawFields == ["Plain", "Jörg", ""])
    }
}

/// SplitMix64: the same lines on every run.
private struct LineGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
