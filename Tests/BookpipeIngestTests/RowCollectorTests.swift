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

    @Test("The line check finds non-ASCII bytes and U+001F/U+001B as the field scan does, and NUL bytes (removed field by field)")
    func lineCheckAgreesWithScan() {
        let interesting: [UInt8] = [0x1F, 0x1B, 0x1A, 0x1E, 0x3F, 0x9F, 0x80, 0xFF, 0xC3, 0x00, 0x7F, 0x0A]
        for length in 0...80 {
            for position in 0..<max(length, 1) {
                for byte in interesting {
                    var line = (0..<length).map { UInt8(0x41 + $0 % 26) }
                    if length > 0 { line[position] = byte }
                    let scanned = line.withUnsafeBytes { RowCollector.scan($0) }
                    let plain = line.withUnsafeBytes { RowCollector.isPlain($0) }
                    #expect(plain == (scanned.isASCII && !scanned.needsEscaping && !line.contains(0)),
                            "length \(length), \(byte) at \(position)")
                }
            }
        }
    }

    @Test("The line check and the UTF-8 validation agree with the standard library's, at every position")
    func lineCheckAgreesWithValidation() {
        let pieces: [[UInt8]] = [[0xC3, 0xA9], [0xE6, 0x97, 0xA5], [0xF0, 0x9F, 0x93, 0x9A], [0xC3], [0xA9], [0xE6, 0x97],
                                 [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0x1F], [0x1B], [0x80]]
        for length in 0...24 {
            for position in 0...length {
                for piece in pieces {
                    var line = (0..<length).map { UInt8(0x41 + $0 % 26) }
                    line.insert(contentsOf: piece, at: position)
                    let valid = String(validating: line, as: UTF8.self) != nil
                    let escapes = line.contains { $0 == 0x1F || $0 == 0x1B }
                    let ascii = line.allSatisfy { $0 < 0x80 }
                    line.withUnsafeBytes { bytes in
                        #expect(TextDecoding.isValidUTF8(bytes) == valid, "\(line)")
                        let expected: RowCollector.LineCheck = escapes || !valid ? .fieldByField : (ascii ? .ascii : .utf8)
                        #expect(RowCollector.checkLine(bytes) == expected, "\(line)")
                    }
                }
            }
        }
    }

    /// A collector holding one row of these fields, as libcsv hands them over.
    static func collector(holding fields: [String]) -> RowCollector {
        let collector = RowCollector(maximumFields: 100, fieldLimit: 1 << 20)
        collector.reset()
        for field in fields {
            var text = field
            text.withUTF8 { collector.appendField(UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
        }
        return collector
    }

    @Test("List cells split in the row's bytes give what splitting their strings gives")
    func splitFromBytes() {
        let cells = ["to-read, favorites", "a,b,,c", " , ", "", " single ", "Ö, ü,é", "x\u{1F}y, z", "e\u{1B}, f",
                     "a, b, c", "a,, b", ",,", "tab\t,\nnl", "a||b||", "日本;中文", "éé", "a ,b"]
        for separator in [",", ", ", ";", "||", "é", " "] {
            for cell in cells {
                let collector = Self.collector(holding: ["first", cell, "last"])
                #expect(collector.row.splitTrimmed(1, by: separator) == cell.splitTrimmed(by: separator),
                        "\(cell.debugDescription) by \(separator.debugDescription)")
            }
        }
    }

    @Test("A list id cell trimmed and prefixed in the row's bytes gives what its string gives")
    func entryFromBytes() {
        let cells = ["12345", " 12345 ", "\t9\r\n", "", " ", "\n\n", "é 1", " 日本 ", "a\u{1F}b", " e\u{1B} ", "x y"]
        for prefix in ["goodreads\u{1F}id:", "Liste é\u{1F}id:", ""] {
            for cell in cells {
                let collector = Self.collector(holding: ["first", cell, "last"])
                let made = collector.row.trimmedString(1, prefixedBy: prefix)
                #expect(made == prefix + cell.trimmingSpaces, "\(cell.debugDescription) after \(prefix.debugDescription)")
                #expect(Array(made.utf8) == Array((prefix + cell.trimmingSpaces).utf8))
            }
        }
    }

    @Test("A single-ISBN cell is kept or dropped in the row's bytes as its string decides")
    func isbnCellFromBytes() {
        let cells = ["=\"\"", " =\"\" ", "=\"\"\t", "=\"0439023483\"", "9780439023481", " ", "\t\n", "=", "\"\"",
                     "=\"\"x", "x=\"\"", "=\"", "ISBN 0-439-02348-3", "é", "=\"\u{1F}\"", "\r=\"\"\r"]
        for cell in cells {
            let collector = RowCollector(maximumFields: 100, fieldLimit: 1 << 20)
            collector.reset()
            for field in ["first", cell, "last"] {
                var text = field
                text.withUTF8 { collector.appendField(UnsafeMutableRawPointer(mutating: $0.baseAddress), $0.count) }
            }
            var kept: [String] = []
            RecordBuilder.appendISBNs(cell, style: .single, to: &kept)
            let fromBytes = collector.row.isKeptISBNCell(1)
            #expect(fromBytes == nil || fromBytes == !kept.isEmpty, "\(cell.debugDescription)")
            #expect(fromBytes != nil || cell.utf8.contains(0x1F), "\(cell.debugDescription)")
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
