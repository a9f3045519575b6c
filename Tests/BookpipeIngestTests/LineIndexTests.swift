import Testing
@testable import BookpipeIngest

@Suite struct LineIndexTests {
    /// Line and column by counting every character from the start: the definition.
    static func slowLocation(_ bytes: [UInt8], _ offset: Int, bom: Int) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        var position = bom
        while position < offset {
            if bytes[position] == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if bytes[position] & 0xC0 != 0x80 {
                column += 1
            }
            position += 1
        }
        return (line, column)
    }

    @Test("Line and column of every offset equal counting from the start: long lines, several lines, multi-byte letters, a BOM")
    func matchesTheDefinition() {
        var text = "\u{FEFF}"
        for index in 0..<600 { text += index % 97 == 0 ? "\n" : (index % 3 == 0 ? "é" : index % 5 == 0 ? "漢" : "{\"a\":1},") }
        let bytes = Array(text.utf8)
        let index = LineIndex(bytes, skippingBOM: 3)
        for offset in stride(from: 3, through: bytes.count, by: 1) where offset == bytes.count || bytes[offset] & 0xC0 != 0x80 {
            let fast = index.location(of: offset)
            let slow = Self.slowLocation(bytes, offset, bom: 3)
            #expect(fast.line == slow.line && fast.column == slow.column, "offset \(offset)")
        }
    }
}
