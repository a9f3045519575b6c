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

@Suite struct DurationTextTests {
    @Test("Durations read as a person says them, rounded up to whole seconds")
    func describe() {
        #expect(DurationText.describe(seconds: 0) == "0 s")
        #expect(DurationText.describe(seconds: 41.2) == "42 s")
        #expect(DurationText.describe(seconds: 185) == "3 min 5 s")
        #expect(DurationText.describe(seconds: 2 * 3600 + 600) == "2 h 10 min")
        #expect(DurationText.describe(seconds: 30 * 86_400) == "30 d")
        #expect(DurationText.describe(seconds: 2 * 86_400 + 5 * 3600) == "2 d 5 h")
    }
}
