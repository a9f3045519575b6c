import Testing
@testable import BookpipeReport

@Suite struct DateValidationTests {
    @Test("Reads the dates exports write", arguments: ["2020/10/21", "2020-10-21", "2020-1-5", "2020-10-21T08:30:00Z",
                                                      "2020/10/21 08:30", "10/21/2020", "21.10.2020", "2020", "2020-02",
                                                      "Jan 5, 2020", "5 January 2020", "2024-02-29"])
    func readable(_ text: String) {
        #expect(DateValidation.isReadable(text))
    }

    @Test("Rejects what is not a date", arguments: ["31/31/2020", "2021-02-29", "2020-13-01", "yesterday", "20/10",
                                                   "0000-00-00", "2020-10-21-5", "Smarch 5, 2020", "1.2.3"])
    func unreadable(_ text: String) {
        #expect(!DateValidation.isReadable(text))
    }
}
