import Testing
@testable import BookpipeCore

@Suite struct TerminalTextTests {
    @Test("Controls and bidirectional overrides become visible escapes; letters of every script stay as they are")
    func inert() {
        #expect(TerminalText.inert("\u{1B}[2J\u{1B}[31mRED") == "\\u{1B}[2J\\u{1B}[31mRED")
        #expect(TerminalText.inert("\rover\nwritten\t!") == "\\rover\\nwritten\\t!")
        #expect(TerminalText.inert("abc\u{202E}fed.txt") == "abc\\u{202E}fed.txt")
        #expect(TerminalText.inert("x\u{2066}y\u{2069}\u{7F}\u{85}") == "x\\u{2066}y\\u{2069}\\u{7F}\\u{85}")
        for text in ["Les Misérables", "ノルウェイの森", "שלום עולם", "كتاب\u{200F}", "Ступени", "🙂 emoji", ""] {
            #expect(TerminalText.inert(text) == text)
        }
    }
}
