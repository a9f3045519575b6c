// Fuzz target: the cell parsers of BookpipeCore: ISBNs (Excel formulas, hyphens, lists, 10 and
// 13 digits), dates (every shape, both day/month orders), author names and lists, titles.
// Beyond not crashing: a valid ISBN converts 13 -> 10 -> 13 unchanged, and a date read is a
// real calendar day.
import BookpipeCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTextParsing(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)

    if case .success(let reading) = ISBN.read(text) {
        let isbn = reading.isbn
        precondition((try? ISBN(isbn.isbn13))?.isbn13 == isbn.isbn13, "ISBN-13 \(isbn.isbn13) does not read back")
        if let isbn10 = isbn.isbn10 {
            precondition((try? ISBN(isbn10))?.isbn13 == isbn.isbn13, "ISBN-10 \(isbn10) does not convert back")
        }
    }
    _ = ISBN.clean(text)
    for part in ISBN.splitList(text) { _ = ISBN.parse(part) }

    for order in [DayMonthOrder.dayFirst, .monthFirst, nil] {
        if case .success(let date) = ReadDate.parse(text, order: order) {
            precondition(ReadDate(year: date.year, month: date.month, day: date.day) == date, "\(date) is not a date")
        }
    }
    _ = DayMonthOrder.evidence(in: text)

    _ = AuthorNormalizer.displayNameAndKey(text)
    for style in AuthorListStyle.allCases { _ = AuthorNormalizer.splitAuthorList(text, style: style) }

    let title = TitleNormalizer.normalize(text)
    _ = TitleNormalizer.key(title.cleaned)
    return 0
}
