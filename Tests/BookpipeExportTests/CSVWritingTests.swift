import Testing
@testable import BookpipeExport

@Suite struct CSVWritingTests {
    @Test("A cell a spreadsheet would run as a formula gets a leading apostrophe",
          arguments: ["=SUM(A1)", "+1", "-1", "@cmd", "\tTAB", "\rCR"])
    func neutralised(_ cell: String) {
        #expect(CSVWriting.neutralized(cell) == "'" + cell)
    }

    @Test("Other cells are left as they are, formula characters after the first included",
          arguments: ["", "Dune", "1+1", "a=b", " =SUM(A1)", "'quoted", "ÉLAN"])
    func leftAlone(_ cell: String) {
        #expect(CSVWriting.neutralized(cell) == cell)
    }

    @Test("Cells with commas, quotes or line breaks are quoted with quotes doubled; others are not")
    func quoting() {
        #expect(CSVWriting.quoted("Herbert, Frank") == "\"Herbert, Frank\"")
        #expect(CSVWriting.quoted("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(CSVWriting.quoted("two\nlines") == "\"two\nlines\"")
        #expect(CSVWriting.quoted("two\r\nlines") == "\"two\r\nlines\"", "a CRLF is one Character, found as scalars")
        #expect(CSVWriting.quoted("plain text") == "plain text")
        #expect(CSVWriting.quoted("=HYPERLINK(\"http://x\")") == "\"'=HYPERLINK(\"\"http://x\"\")\"")
    }

    @Test("A line is the quoted cells joined by commas, ending in CRLF")
    func line() {
        #expect(CSVWriting.line(["a", "b, c", "", "-1"]) == "a,\"b, c\",,'-1\r\n")
        #expect(CSVWriting.line([]) == "\r\n")
    }
}
