internal import Foundation

/// Fills a record's ``BookRecord/normalized`` forms and raises the data-quality findings that
/// normalising reveals.
///
/// Normalising reads only what was read (``BookRecord/title``, ``BookRecord/authors``,
/// ``BookRecord/rawISBNs``, ``BookRecord/year``) and never rewrites it, so it is idempotent:
/// running it twice gives the same record.
///
/// Findings it raises (codes are stable):
///
/// | code | severity | when |
/// |---|---|---|
/// | `isbn.invalid-checksum` | warning | the check digit does not match |
/// | `isbn.wrong-length` | warning | neither 10 nor 13 characters (and no leading zero restores it) |
/// | `isbn.invalid-characters` | warning | characters other than digits and a final X |
/// | `isbn.invalid-prefix` | warning | 13 digits not starting with 978 or 979 |
/// | `isbn.excel-scientific` | warning | a spreadsheet rounded the ISBN (`9.78044E+12`); it is lost |
/// | `isbn.leading-zero-restored` | info | a spreadsheet had dropped an ISBN-10's leading zero(s) |
/// | `isbn.leading-zero-restored` | warning | only 7 digits: three zeros put back is a guess |
/// | `isbn.scientific-notation-expanded` | info | full-precision scientific notation was read back |
/// | `isbn.10-13-disagree` | warning | the row's ISBN-10 and ISBN-13 are different books (the ISBN-13 is used) |
/// | `isbn.10-13-disagree` | warning | the ISBN-10 is the row's ISBN-13 cut to ten digits (no ISBN is made of it) |
/// | `title.empty` | warning | no title is left after clean-up |
/// | `year.impossible` | warning | the year is before 1400 or after next year + 1 |
public enum Normalizer {
    /// The earliest year accepted without a `year.impossible` finding.
    public static let earliestPlausibleYear = 1400
    /// How many years after the current one a (pre-announced) publication year may be.
    public static let futureYearAllowance = 2

    /// Fills `record.normalized` and adds findings, using today's year for `year.impossible`.
    ///
    /// - Parameter record: The record to normalise; only ``BookRecord/normalized`` and
    ///   ``BookRecord/findings`` change.
    public static func normalize(_ record: inout BookRecord) {
        normalize(&record, currentYear: currentYear())
    }

    /// Fills `record.normalized` and adds findings.
    ///
    /// ```swift
    /// var record = BookRecord(origin: origin, title: "Dune (Dune, #1)",
    ///                         authors: ["Herbert, Frank"], rawISBNs: ["=\"0441013597\""])
    /// Normalizer.normalize(&record, currentYear: 2026)
    /// record.normalized?.searchTitle  // "Dune"
    /// record.normalized?.isbn13       // "9780441013593"
    /// ```
    ///
    /// - Parameters:
    ///   - record: The record to normalise.
    ///   - currentYear: The year `year.impossible` is measured against (injected for tests).
    public static func normalize(_ record: inout BookRecord, currentYear: Int) {
        let title = TitleNormalizer.normalize(record.title)
        var findings: [Finding] = []

        if title.key.isEmpty {
            findings.append(Finding(
                code: "title.empty", severity: .warning, field: "title",
                message: record.title.isEmpty
                    ? "The title is empty; the book can only be matched by ISBN. Add the title and import again."
                    : "The title \"\(record.title)\" has no letters or digits; the book can only be matched by ISBN."))
        }

        // Authors: display order, deduplicated by key, empty ones dropped. Usually every name is
        // kept as read: then the record's own array is shared (`changed` stays nil).
        var changed: [String]?
        var authorKeys: [String] = []
        authorKeys.reserveCapacity(record.authors.count)
        for (index, raw) in record.authors.enumerated() {
            let (name, key) = AuthorNormalizer.displayNameAndKey(raw)
            let kept = !key.isEmpty && !authorKeys.contains(key)
            if changed == nil && (!kept || name != raw) { changed = Array(record.authors[..<index]) }
            guard kept else { continue }
            changed?.append(name)
            authorKeys.append(key)
        }
        let authors = changed ?? record.authors

        // ISBNs.
        let isbns = readISBNs(record.rawISBNs)
        findings.append(contentsOf: isbns.findings)

        if let year = record.year {
            let latest = currentYear + futureYearAllowance
            if year < earliestPlausibleYear || year > latest {
                findings.append(Finding(
                    code: "year.impossible", severity: .warning, field: "year",
                    message: "The year \(year) is outside \(earliestPlausibleYear)…\(latest); check the year column "
                        + "(an ancient work's original date is kept as read)."))
            }
        }

        record.normalized = NormalizedForms(
            searchTitle: title.searchTitle, mainTitle: title.mainTitle, titleKey: title.key,
            series: title.series, seriesNumber: title.seriesNumber,
            authors: authors, authorKeys: authorKeys,
            isbn13: isbns.all.first, allISBN13s: isbns.all)
        for finding in findings { record.addFinding(finding) }
    }

    /// The ISBN-13s and findings from a row's raw ISBN values.
    ///
    /// Each value may hold several ISBNs (``ISBN/splitList(_:)``). Empty values (`=""`) are
    /// skipped silently: a missing ISBN is not an error. When the row has ISBNs read from 10-digit
    /// values and from 13-digit values and none of them agree, `isbn.10-13-disagree` is raised and
    /// the ISBNs written as ISBN-13 come first (the record's ``NormalizedForms/isbn13`` is the
    /// file's checksum-valid ISBN-13, not a converted ISBN-10). A 10-digit value that is the first
    /// ten digits of the row's ISBN-13 is a cut ISBN-13, not an ISBN-10, even when its check digit
    /// matches by chance: it gives no ISBN, and the finding says so.
    ///
    /// - Parameter rawValues: The row's ISBN values as read, in column order.
    /// - Returns: The distinct ISBN-13s (written ISBN-13s first when they disagree with the
    ///   ISBN-10s, otherwise in column order), and the findings.
    public static func readISBNs(_ rawValues: [String]) -> (all: [String], findings: [Finding]) {
        var all: [String] = []
        var findings: [Finding] = []
        // Where each ISBN of `all` was read from: bit 0 of its two bits for an ISBN-10 value,
        // bit 1 for an ISBN-13 value (the first 32 ISBNs; more is never seen, and then the lists
        // are rebuilt below).
        var sources: UInt64 = 0
        var failed = false
        func accept(_ reading: ISBN.Reading, from piece: String) {
            let isbn13 = reading.isbn.isbn13
            let index = all.firstIndex(of: isbn13) ?? all.count
            if index == all.count { all.append(isbn13) }
            if index < 32 { sources |= UInt64(reading.sourceLength == 10 ? 1 : 2) << UInt64(2 * index) }
            for repair in reading.repairs {
                findings.append(finding(for: repair, raw: piece, isbn: reading.isbn))
            }
        }
        func read(_ piece: String) {
            switch ISBN.read(piece) {
            case .success(let reading):
                accept(reading, from: piece)
            case .failure(.empty):
                break
            case .failure:
                failed = true
            }
        }
        for value in rawValues {
            // A single value (the usual case) needs no list: a value `splitList` would drop
            // reads as empty, and empty values are skipped. A valid ISBN's digits (bare or in
            // Goodreads' formula) are one value that `ISBN.read` reads so.
            if let reading = ISBN.validDigitsRead(value.utf8.span) {
                accept(reading, from: value)
            } else if ISBN.isSingleASCIIValue(value) {
                read(value)
            } else {
                for piece in ISBN.splitList(value) { read(piece) }
            }
        }
        let tenBits: UInt64 = 0x5555_5555_5555_5555
        let fromTenAndThirteen = sources & (sources >> 1) & tenBits
        if failed || all.count > 32
            || (sources & tenBits != 0 && sources & (tenBits << 1) != 0 && fromTenAndThirteen == 0) {
            // Rare: an invalid value, or ISBN-10s and ISBN-13s that disagree.
            return readISBNsComparingColumns(rawValues)
        }
        return (all, findings)
    }

    /// ``readISBNs(_:)`` for rows with an invalid value or with ISBN-10s and ISBN-13s that
    /// disagree: every value is read again, and the ISBN-10s are compared with the ISBN-13s.
    static func readISBNsComparingColumns(_ rawValues: [String]) -> (all: [String], findings: [Finding]) {
        let pieces = rawValues.flatMap { ISBN.splitList($0) }
        let readings = pieces.map { ISBN.read($0) }
        // The row's ISBN-13s as written (valid ones), to recognise a cut one.
        var writtenThirteens: [String] = []
        for case .success(let reading) in readings where reading.sourceLength == 13 {
            writtenThirteens.append(reading.isbn.isbn13)
        }
        func cut(of piece: String) -> String? {
            guard let cleaned = ISBN.clean(piece), cleaned.count == 10 else { return nil }
            return writtenThirteens.first { $0.hasPrefix(cleaned) }
        }
        var fromTen: [String] = []
        var fromThirteen: [String] = []
        var inOrder: [String] = []
        var findings: [Finding] = []
        for (piece, result) in zip(pieces, readings) {
            if let isbn13 = cut(of: piece) {
                findings.append(Finding(
                    code: "isbn.10-13-disagree", severity: .warning, field: "isbn",
                    message: "\"\(ISBN.displayForm(piece))\" is the first ten digits of the row's ISBN-13 \(isbn13), "
                        + "not an ISBN-10 (a check digit that matches would be chance); the ISBN-13 is used."))
                continue
            }
            switch result {
            case .success(let reading):
                inOrder.append(reading.isbn.isbn13)
                if reading.sourceLength == 10 {
                    fromTen.append(reading.isbn.isbn13)
                } else {
                    fromThirteen.append(reading.isbn.isbn13)
                }
                for repair in reading.repairs {
                    findings.append(finding(for: repair, raw: piece, isbn: reading.isbn))
                }
            case .failure(.empty):
                break
            case .failure(let error):
                findings.append(Finding(
                    code: error.findingCode, severity: .warning, field: "isbn",
                    message: error.description + (error.isRecoverableByHand
                        ? " Fix the ISBN and import again; the book is still matched by title and author."
                        : "")))
            }
        }
        var ordered = inOrder
        if !fromTen.isEmpty, !fromThirteen.isEmpty, !fromTen.contains(where: fromThirteen.contains) {
            let tens = fromTen.compactMap { ISBN(validISBN13: $0).isbn10 }.joined(separator: ", ")
            findings.append(Finding(
                code: "isbn.10-13-disagree", severity: .warning, field: "isbn",
                message: "The ISBN-10 \(tens) and the ISBN-13 \(fromThirteen.joined(separator: ", ")) "
                    + "are different books; check which one is right. The ISBN-13 is used; both are kept for matching."))
            ordered = fromThirteen + fromTen
        }
        var all: [String] = []
        for isbn in ordered where !all.contains(isbn) { all.append(isbn) }
        return (all, findings)
    }

    private static func finding(for repair: ISBN.Repair, raw: String, isbn: ISBN) -> Finding {
        let shown = ISBN.displayForm(raw)
        switch repair {
        case .leadingZeroRestored:
            let digits = ISBN.clean(raw)?.count ?? 9
            if digits <= 7 {
                // Three zeros put back: more a guess than a repair.
                return Finding(
                    code: "isbn.leading-zero-restored", severity: .warning, field: "isbn",
                    message: "\"\(shown)\" has only \(digits) digits; with \(10 - digits) leading zeros put back it "
                        + "reads as ISBN-10 \(isbn.isbn10 ?? isbn.isbn13), but that may be chance. Check the ISBN; "
                        + "the book is still matched by title and author.")
            }
            return Finding(
                code: "isbn.leading-zero-restored", severity: .info, field: "isbn",
                message: "\"\(shown)\" had lost its leading zero (a spreadsheet stored it as a number); "
                    + "read as ISBN-10 \(isbn.isbn10 ?? isbn.isbn13).")
        case .scientificNotationExpanded:
            return Finding(
                code: "isbn.scientific-notation-expanded", severity: .info, field: "isbn",
                message: "\"\(shown)\" was written in scientific notation by a spreadsheet; every digit was "
                    + "still there, read as ISBN-13 \(isbn.isbn13).")
        }
    }

    /// The current year in UTC.
    public static func currentYear() -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar.component(.year, from: Date())
    }
}

extension ISBNError {
    /// True when a person can fix the value by typing it again (everything except an empty value).
    var isRecoverableByHand: Bool {
        switch self {
        case .empty: false
        case .excelScientificNotation: false  // its message already says what to do
        default: true
        }
    }
}
