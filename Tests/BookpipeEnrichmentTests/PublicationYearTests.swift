import Testing
@testable import BookpipeEnrichment

@Suite struct PublicationYearTests {
    static let cases: [(String?, Int?)] = [
        ("1996", 1996), ("May 2, 2006", 2006), ("2006-05", 2006), ("2018-12-11", 2018),
        ("2019-10-03T00:00:00+02:00", 2019), ("c1996", 1996), ("[1996?]", 1996), ("12/05/2006", 2006),
        ("October 1, 1988", 1988), ("19uu", nil), ("", nil), (nil, nil), ("123456", nil), ("0999", nil),
        ("20061", nil), ("1st ed. 1975", 1975),
    ]

    @Test("Reads the year from the date forms Open Library and Google Books send", arguments: cases)
    func parsesYears(text: String?, year: Int?) {
        #expect(PublicationYear.parse(text) == year)
    }
}
