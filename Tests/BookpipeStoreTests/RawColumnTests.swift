import BookpipeCore
import Testing
@testable import BookpipeStore

/// The `raw` column's format is the store's: these bytes are what library files hold.
@Suite struct RawColumnTests {
    @Test("Raw fields are stored joined by U+001F, with U+001F and ESC escaped inside a field")
    func format() {
        let fields = ["a", "", "x\u{1F}y", "e\u{1B}f", "é"]
        let text = RawColumn.text(of: RawFields(fields))
        #expect(Array(text.utf8) == Array("a\u{1F}\u{1F}x\u{1B}_y\u{1F}e\u{1B}[f\u{1F}é".utf8))
        #expect(RawColumn.fields(text).fields == fields)
        #expect(RawColumn.fields(nil).fields == [])
        #expect(RawColumn.fields("").fields == [""])
        #expect(RawColumn.text(of: RawFields([""])) == "")
    }
}

/// The record encoder's writer is a faster way to write what `JSONText` writes.
@Suite struct ByteWriterTests {
    @Test("Integers and strings are written byte for byte as JSONText writes them")
    func agreesWithJSONText() {
        let integers = Array(-120...120) + Array(990...1010) + Array(9990...10010)
            + [Int.min, Int.max, -1000, -9999, 123_456, 1_000_000_007]
        let strings = ["", "plain", "quo\"te", "back\\slash", "new\nline", "tab\there", "\u{1}\u{1F}\u{7F}", "é日本",
                       String(repeating: "long text ", count: 300), "\u{8}\u{C}\r"]
        let writer = ByteWriter(capacity: 16)
        var expected: [UInt8] = []
        for value in integers {
            writer.appendInteger(value)
            JSONText.appendInteger(value, to: &expected)
            writer.append(UInt8(ascii: ","))
            expected.append(UInt8(ascii: ","))
        }
        for text in strings {
            writer.appendJSONString(text)
            JSONText.appendString(text, to: &expected)
            writer.appendNull()
            expected += Array("null".utf8)
        }
        var copied: [UInt8] = [1, 2]
        writer.copy(to: &copied)
        #expect(copied == [1, 2] + expected)
        // Handed over whole, and the writer starts again empty.
        let taken = writer.take()
        #expect(taken.withUnsafeBufferPointer { Array($0) } == expected)
        writer.append(UInt8(ascii: "x"))
        var after: [UInt8] = []
        writer.copy(to: &after)
        #expect(after == [UInt8(ascii: "x")])
    }
}
