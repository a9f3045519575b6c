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
