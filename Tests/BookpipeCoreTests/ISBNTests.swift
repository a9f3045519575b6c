import Foundation
import Testing
@testable import BookpipeCore

@Suite struct ISBNTests {
    @Test("Cleaning strips Excel wrappers, brackets, labels, hyphens and spaces", arguments: [
        ("=\"0439023483\"", "0439023483"),
        ("\"=\"\"1250313198\"\"\"", "1250313198"),
        ("=\"\"1250313198\"\"", "1250313198"),
        ("[2070291340]", "2070291340"),
        ("978-0-439-02348-1", "9780439023481"),
        ("978 0 439 02348 1", "9780439023481"),
        ("ISBN: 0-8044-2957-x", "080442957X"),
        ("ISBN 9780439023481", "9780439023481"),
        ("isbn-13: 978-0-439-02348-1", "9780439023481"),
        ("ISBN10: 0439023483", "0439023483"),
        ("  9780439023481\u{00A0}", "9780439023481"),
        ("\u{FEFF}0439023483", "0439023483"),
        ("978\u{2013}0\u{2013}439\u{2013}02348\u{2013}1", "9780439023481"),
        ("ISBN=0439023483", "0439023483"),
        ("ISBN: ISBN13: 9780439023481", "9780439023481"),
    ])
    func cleans(raw: String, cleaned: String) {
        #expect(ISBN.clean(raw) == cleaned)
    }

    @Test("Cleaning an empty Excel formula or blank value gives nil", arguments: [
        "=\"\"", "\"=\"\"\"\"\"", "", "   ", "[]", "ISBN:",
        "ISBN=\"\"",  // once "=": cleaning its result gave nil, so cleaning was not idempotent (property test)
    ])
    func cleansToNothing(raw: String) {
        #expect(ISBN.clean(raw) == nil)
    }

    @Test("Valid ISBN-10s convert to the matching ISBN-13", arguments: [
        ("0439023483", "9780439023481"),
        ("=\"1250313198\"", "9781250313195"),
        ("=\"0062445316\"", "9780062445315"),
        ("[2070291340]", "9782070291342"),
        ("0374538654", "9780374538651"),
        ("080442957X", "9780804429573"),
        ("080442957x", "9780804429573"),
        ("0441013597", "9780441013593"),
    ])
    func convertsTenToThirteen(raw: String, isbn13: String) throws {
        let isbn = try ISBN(raw)
        #expect(isbn.isbn13 == isbn13)
        #expect(isbn.description == isbn13)
        #expect(isbn.isbn10 == ISBN.clean(raw)?.uppercased())
    }

    @Test("Valid ISBN-13s from the fixtures parse as themselves", arguments: [
        "9781250313195", "9780062445315", "9780142402498", "9780735214484", "9780441013593",
        "9780593135204", "9780547928227", "9780571364879", "9780520227354", "9782070291342",
        "9780756411800", "9780449017036", "9780375503122", "9781786090034",
    ])
    func parsesThirteen(isbn13: String) throws {
        #expect(try ISBN(isbn13).isbn13 == isbn13)
    }

    @Test("An ISBN-13 with the 979 prefix has no ISBN-10")
    func prefix979HasNoTen() throws {
        let isbn = try ISBN("979-10-90636-07-1")
        #expect(isbn.isbn13 == "9791090636071")
        #expect(isbn.isbn10 == nil)
    }

    @Test("An ISBN-10 and its ISBN-13 are the same ISBN")
    func tenAndThirteenAreEqual() throws {
        #expect(try ISBN("0439023483") == ISBN("978-0-439-02348-1"))
    }

    @Test("Bad values fail with a message naming the value and the problem", arguments: [
        ("978-0-00-000000-1", "\"978-0-00-000000-1\" is not a valid ISBN-13 (check digit should be 2)."),
        ("0439023484", "\"0439023484\" is not a valid ISBN-10 (check digit should be 3)."),
        ("=\"0439023484\"", "\"0439023484\" is not a valid ISBN-10 (check digit should be 3)."),
        ("12345", "\"12345\" has 5 characters; an ISBN has 10 or 13."),
        ("97804390234811", "\"97804390234811\" has 14 characters; an ISBN has 10 or 13."),
        ("04390X3483", "\"04390X3483\" is not an ISBN: only digits are allowed, and X as the last character of an ISBN-10."),
        ("abc", "\"abc\" is not an ISBN: only digits are allowed, and X as the last character of an ISBN-10."),
        ("1234567890128", "\"1234567890128\" is not a valid ISBN-13 (it must start with 978 or 979)."),
        ("=\"\"", "The ISBN is empty."),
    ])
    func rejects(raw: String, message: String) {
        switch ISBN.parse(raw) {
        case .success(let isbn): Issue.record("accepted \(raw) as \(isbn)")
        case .failure(let error): #expect(error.description == message)
        }
    }

    @Test("The check-digit error carries the expected digit and the finding code")
    func checkDigitError() {
        #expect(ISBN.parse("978-0-00-000000-1")
            == .failure(.invalidCheckDigit(value: "978-0-00-000000-1", length: 13, expected: "2")))
        #expect(ISBNError.invalidCheckDigit(value: "x", length: 13, expected: "2").findingCode == "isbn.invalid-checksum")
    }

    @Test("Typed throws: the initializer throws ISBNError")
    func typedThrows() {
        #expect(throws: ISBNError.empty) { try ISBN("=\"\"") }
    }

    @Test("A number rounded to scientific notation by a spreadsheet is an unrecoverable error", arguments: [
        "9.78044E+12", "9,78044E+12", "9.78044e+12", "=\"9.78044E+12\"", "9.78044E12",
    ])
    func scientificNotation(raw: String) {
        guard case .failure(let error) = ISBN.parse(raw) else {
            Issue.record("accepted \(raw)")
            return
        }
        guard case .excelScientificNotation = error else {
            Issue.record("wrong error \(error)")
            return
        }
        #expect(error.findingCode == "isbn.excel-scientific")
        #expect(error.description.contains("spreadsheet rounded"))
        #expect(error.description.contains("cannot be recovered"))
    }

    @Test("Scientific notation that kept every digit is read back and flagged")
    func scientificNotationFullPrecision() throws {
        let reading = try ISBN.read("9.780439023481E+12").get()
        #expect(reading.isbn.isbn13 == "9780439023481")
        #expect(reading.repairs == [.scientificNotationExpanded])
    }

    @Test("An ISBN-10 that lost its leading zero is restored and flagged", arguments: [
        ("439023483", "9780439023481"),
        ("=\"439023483\"", "9780439023481"),
        ("80442957X", "9780804429573"),
        ("6547079", "9780006547075"),
    ])
    func leadingZeroRestored(raw: String, isbn13: String) throws {
        let reading = try ISBN.read(raw).get()
        #expect(reading.isbn.isbn13 == isbn13)
        #expect(reading.repairs == [.leadingZeroRestored])
        #expect(reading.sourceLength == 10)
    }

    @Test("A 9-digit value that is not valid with a leading zero is a length error")
    func nineDigitsNotRestored() {
        #expect(ISBN.parse("439023484") == .failure(.wrongLength(value: "439023484", digits: 9)))
    }

    @Test("A well-formed value reports no repairs and its source length")
    func noRepairs() throws {
        #expect(try ISBN.read("0439023483").get() == ISBN.Reading(
            isbn: ISBN("9780439023481"), sourceLength: 10, repairs: []))
        #expect(try ISBN.read("9780439023481").get().sourceLength == 13)
    }

    @Test("Fields holding several ISBNs are split into their values", arguments: [
        ("2070291340, 9782070291342", ["2070291340", "9782070291342"]),
        ("2070291340;9782070291342", ["2070291340", "9782070291342"]),
        ("2070291340 | 9782070291342", ["2070291340", "9782070291342"]),
        ("2070291340 9782070291342", ["2070291340", "9782070291342"]),
        ("978 0 439 02348 1", ["978 0 439 02348 1"]),
        ("978-0-439-02348-1", ["978-0-439-02348-1"]),
        ("[2070291340]", ["[2070291340]"]),
        ("", []),
        (" , ;", []),
        ("=\"\"", []),
    ])
    func splitsLists(raw: String, values: [String]) {
        #expect(ISBN.splitList(raw) == values)
    }

    @Test("An ISBN encodes as its ISBN-13 string and decoding validates")
    func codable() throws {
        let isbn = try ISBN("0439023483")
        let data = try JSONEncoder().encode([isbn])
        #expect(String(decoding: data, as: UTF8.self) == "[\"9780439023481\"]")
        #expect(try JSONDecoder().decode([ISBN].self, from: data) == [isbn])
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([ISBN].self, from: Data("[\"9780439023482\"]".utf8))
        }
    }

    @Test("Odd input never crashes the parser", arguments: [
        "😀", "٩٧٨٠٤٣٩٠٢٣٤٨١", "X", "XXXXXXXXXX", "=", "\"", "E+12", "1E+12", "9.E+12", ".5E3",
        "9780439023481X", "ISBN", "ISBN13", String(repeating: "9", count: 1000), "9.78E+99999999999999999999",
    ])
    func noCrash(raw: String) {
        _ = ISBN.parse(raw)
        _ = ISBN.splitList(raw)
    }
}
