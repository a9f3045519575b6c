import Foundation
import Testing

/// `bookpipe report` on an export with known problems, each counted exactly; checks, history and
/// comparison through the built binary, with their exit codes.
@Suite(.timeLimit(.minutes(6)))
struct ReportQualityTests {
    static let header = "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,"
        + "Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,"
        + "Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,"
        + "Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,Condition Description,BCID"

    /// A Goodreads row: the columns a report looks at, the rest empty.
    static func row(_ id: Int, _ title: String, _ author: String, isbn13: String = "", rating: Int = 0, publisher: String = "Pub",
                    pages: String = "200", published: String = "2005", original: String = "2005", read: String = "",
                    added: String = "2020/01/01") -> String {
        func cell(_ text: String) -> String {
            text.contains(",") || text.contains("\"") ? "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : text
        }
        let isbn = isbn13.isEmpty ? "\"=\"\"\"\"\"" : "\"=\"\"\(isbn13)\"\"\""
        return [String(id), cell(title), cell(author), "", "", "\"=\"\"\"\"\"", isbn, String(rating), "4.0", cell(publisher),
                "Paperback", pages, published, original, read, added, "", "", "read", "", "", "", "1", "", "", "0", "", "", "", "", ""]
            .joined(separator: ",")
    }

    static let hostileTitle = "<script>alert(1)</script> Evil \u{202E}txt.exe"

    /// Eleven rows, each problem known: a book held twice (same ISBN-13, title and author), an
    /// invalid check digit, a row without title, one without author, a hostile title, Year
    /// Published 3020 (Original Publication Year 1999), 99,999 and 0 pages, a rating of 7 on a 0–5
    /// scale, a book read before it was published.
    static let export = ([header] + [
        row(101, "Dune", "Frank Herbert", isbn13: "9780441013593", rating: 5, publisher: "Ace", pages: "412", published: "1990",
            original: "1965", read: "2001/02/03"),
        row(102, "Dune", "Frank Herbert", isbn13: "9780441013593", rating: 4, publisher: "Ace", pages: "412", published: "1990",
            original: "1965"),
        row(103, "Bad Check", "Ann Lee", isbn13: "9780441013594", rating: 3, publisher: "Tor"),
        row(104, "", "Ann Lee", isbn13: "9780316556347", publisher: "Orbit"),
        row(105, "Anonymous Work", "", publisher: ""),
        row(106, hostileTitle, "Mallory"),
        row(107, "Far Future", "Ann Lee", published: "3020", original: "1999"),
        row(108, "Huge Book", "Ann Lee", pages: "99999"),
        row(109, "Zero Pages", "Ann Lee", pages: "0"),
        row(110, "Early Read", "Ann Lee", published: "2015", original: "2015", read: "2010/05/05"),
        row(111, "Overrated", "Ann Lee", rating: 7),
    ]).joined(separator: "\n") + "\n"

    static func imported() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        try Data(export.utf8).write(to: directory.appendingPathComponent("goodreads_library_export.csv"))
        let result = try CLI.run(["import", "goodreads_library_export.csv", "--no-enrich", "--progress", "none",
                                  "--library", "lib.sqlite"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return directory
    }

    static func json(_ directory: URL, _ name: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appendingPathComponent(name))) as? [String: Any])
    }

    static func codes(_ report: [String: Any]) -> [String: Int] {
        let byCode = (report["findings"] as? [String: Any])?["byCode"] as? [[String: Any]] ?? []
        return Dictionary(uniqueKeysWithValues: byCode.compactMap { entry in
            (entry["code"] as? String).map { ($0, entry["count"] as? Int ?? -1) }
        })
    }

    @Test("Each known problem is counted once: duplicates as books, no title once, no author, invalid ISBN, year, pages, rating and read-date outliers; a newer export of the list makes no duplicate")
    func knownProblems() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["report", "--json", "r.json", "--csv", "r.csv", "--library", "lib.sqlite"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        let report = try Self.json(directory, "r.json")
        #expect((report["rows"] as? [String: Any])?["records"] as? Int == 11)
        #expect(report["duplicates"] as? NSDictionary == [
            "books": 2, "groups": 1, "records": 2,
            "byReason": [["name": "sameISBN13", "count": 1], ["name": "sameWork", "count": 0],
                         ["name": "sameTitleAndFirstAuthor", "count": 1]],
        ] as NSDictionary)
        #expect((report["validity"] as? [String: Any])?["invalidISBN"] as? Int == 1)
        #expect(Self.codes(report) == [
            "duplicate.book": 1, "isbn.invalid-checksum": 1, "title.missing": 1, "author.empty": 1, "year.outlier": 1,
            "pages.outlier": 2, "rating.outlier": 1, "date.read-before-publication": 1,
        ])
        let completeness = try #require(report["completeness"] as? [[String: Any]])
        func present(_ field: String) -> Int? { completeness.first { $0["field"] as? String == field }?["present"] as? Int }
        #expect(present("isbn") == 3 && present("publisher") == 10 && present("author") == 10)
        let missingISBN = try #require(completeness.first { $0["field"] as? String == "isbn" })
        #expect(missingISBN["query"] as? String == "bookpipe list missing:isbn")
        #expect((missingISBN["missingSample"] as? [[String: Any]])?.count == 8)
        // Profiles of the fields read.
        let profiles = try #require(report["profiles"] as? [[String: Any]])
        let pages = try #require(profiles.first { $0["field"] as? String == "pages" })
        #expect(pages["filled"] as? Int == 11 && pages["minimum"] as? String == "0" && pages["maximum"] as? String == "99999")
        #expect((pages["top"] as? [[String: Any]])?.first as? NSDictionary == ["name": "200", "count": 7] as NSDictionary)
        let read = try #require(profiles.first { $0["field"] as? String == "dateRead" })
        #expect(read["filled"] as? Int == 2 && read["distinct"] as? Int == 2 && read["minimum"] as? String == "2001/02/03")
        // The drill-down query lists exactly the records the figure counts.
        let listed = try CLI.run(["list", "missing:isbn", "--library", "lib.sqlite"], in: directory)
        #expect(listed.status == 0 && listed.stdout.split(separator: "\n").count == 8, "\(listed.stdout)")
        let invalid = try CLI.run(["list", "isbn:invalid", "--library", "lib.sqlite"], in: directory)
        #expect(invalid.stdout.contains("Bad Check") && invalid.stdout.split(separator: "\n").count == 1)
        // The CSV: a line per record and code (the duplicate group gives two).
        let csv = try String(contentsOf: directory.appendingPathComponent("r.csv"), encoding: .utf8)
        #expect(csv.components(separatedBy: "\r\n").filter { !$0.isEmpty }.count == 1 + 2 + 1 + 1 + 1 + 1 + 2 + 1 + 1)
        // The terminal lists every code with what to do.
        for code in Self.codes(report).keys { #expect(result.stdout.contains(" \(code) "), "\(code)") }

        // A newer export of the same list: one title corrected, one book added. An update, not copies.
        let newer = Self.export.replacingOccurrences(of: "Zero Pages", with: "Zero Pages Fixed")
            + Self.row(112, "New Book", "Ann Lee", isbn13: "9780547773742") + "\n"
        try Data(newer.utf8).write(to: directory.appendingPathComponent("goodreads_library_export (1).csv"))
        let again = try CLI.run(["import", "goodreads_library_export (1).csv", "--no-enrich", "--progress", "none",
                                 "--library", "lib.sqlite"], in: directory)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try CLI.run(["report", "--json", "r2.json", "--library", "lib.sqlite"], in: directory).status == 0)
        let second = try Self.json(directory, "r2.json")
        #expect((second["rows"] as? [String: Any])?["records"] as? Int == 12)
        #expect((second["duplicates"] as? [String: Any])?["books"] as? Int == 2)
        // The runs table counts what each run wrote: 11 stored by the first import, the second's
        // update and new book.
        let runs = try #require(second["runs"] as? [[String: Any]])
        #expect(runs.map { $0["written"] as? Int } == [11, 2])
    }

    @Test("--check: an error-level check that fails exits 1, a failing warning exits 0; each result is in the summary, JSON, CSV and HTML; a bad file is a usage error naming file:line and the choices")
    func checks() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "lib.sqlite", "--no-history"]
        try Data("""
            # what this library must hold
            checks:
              - isbn13.filled >= 90%
              - duplicates.books == 0: warn
              - errors == 0: error
              - records >= 11
            """.utf8).write(to: directory.appendingPathComponent("checks.yaml"))
        let failing = try CLI.run(["report", "--check", "checks.yaml", "--json", "r.json", "--csv", "r.csv", "--html", "r.html"] + library,
                                  in: directory)
        #expect(failing.status == 1)
        #expect(failing.stdout.contains("check FAILED: isbn13.filled >= 90% (value 27.3; checks.yaml:3)"))
        #expect(failing.stdout.contains("check failed (warning): duplicates.books == 0 (value 2; checks.yaml:4)"))
        #expect(failing.stdout.contains("check passed: errors == 0 (value 0; checks.yaml:5)"))
        let checks = try #require(try Self.json(directory, "r.json")["checks"] as? [[String: Any]])
        #expect(checks.map { $0["passed"] as? Bool } == [false, false, true, true])
        #expect(checks.map { $0["location"] as? String } == ["checks.yaml:3", "checks.yaml:4", "checks.yaml:5", "checks.yaml:6"])
        let csv = try String(contentsOf: directory.appendingPathComponent("r.csv"), encoding: .utf8)
        #expect(csv.contains("error,check.failed,,,checks.yaml:3,,isbn13.filled >= 90% does not hold: the value is 27.3"))
        let html = try String(contentsOf: directory.appendingPathComponent("r.html"), encoding: .utf8)
        #expect(html.contains("isbn13.filled &gt;= 90%") && html.contains("checks.yaml:4"))

        try Data("checks:\n  - duplicates.books == 0: warn\n  - records >= 1\n".utf8).write(to: directory.appendingPathComponent("warn.yaml"))
        let warning = try CLI.run(["report", "--check", "warn.yaml"] + library, in: directory)
        #expect(warning.status == 0, "\(warning.stderr)")
        #expect(warning.stdout.contains("check failed (warning): duplicates.books == 0"))

        for (text, message) in [
            ("checks:\n  - isbn13.fill >= 90%\n", "bad.yaml:2: no figure \"isbn13.fill\"; figures: records, errors,"),
            ("checks:\n  - errors == 0\n  - errors == 0: fatal\n", "bad.yaml:3: level \"fatal\" is not one of: warn, error."),
            ("checks:\n  errors = 0\n", "bad.yaml:2: \"errors = 0\" is not a check"),
            ("- records >= 10%\n", "bad.yaml:1: records is a count, not a share"),
        ] {
            try Data(text.utf8).write(to: directory.appendingPathComponent("bad.yaml"))
            let bad = try CLI.run(["report", "--check", "bad.yaml"] + library, in: directory)
            #expect(bad.status == 2)
            #expect(bad.stderr.hasPrefix(message), "\(bad.stderr)")
        }
    }

    @Test("History: each report is kept; the next shows the change since the previous one (marked when worse) in every format; --compare picks a saved report by number or date")
    func history() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let library = ["--library", "lib.sqlite"]
        let first = try CLI.run(["report", "--json", "r1.json"] + library, in: directory)
        #expect(first.status == 0)
        #expect(try Self.json(directory, "r1.json")["previous"] == nil)
        // One more book without an ISBN: worse ISBN coverage.
        try Data(([Self.header, Self.row(201, "Another", "Ann Lee")].joined(separator: "\n") + "\n").utf8)
            .write(to: directory.appendingPathComponent("more.csv"))
        #expect(try CLI.run(["import", "more.csv", "--no-enrich", "--progress", "none"] + library, in: directory).status == 0)
        let second = try CLI.run(["report", "--json", "r2.json", "--html", "r2.html"] + library, in: directory)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("since report #1 ("))
        #expect(second.stdout.contains("records +1") && second.stdout.contains("with an ISBN-13 −2.3 pt (worse)"))
        let report = try Self.json(directory, "r2.json")
        #expect((report["previous"] as? [String: Any])?["id"] as? Int == 1)
        #expect((report["delta"] as? [String: Any])?["records"] as? Int == 1)
        #expect((report["delta"] as? [String: Any])?["isbn13Filled"] as? Double == -2.3)
        #expect((report["history"] as? [Any])?.count == 1)
        let html = try String(contentsOf: directory.appendingPathComponent("r2.html"), encoding: .utf8)
        #expect(html.contains("−2.3 pt worse") && html.contains("<polyline"))

        let compared = try CLI.run(["report", "--compare", "1", "--json", "r3.json", "--no-history"] + library, in: directory)
        #expect(compared.status == 0)
        #expect((try Self.json(directory, "r3.json")["previous"] as? [String: Any])?["id"] as? Int == 1)
        let byDate = try CLI.run(["report", "--compare", "2999-01-01", "--json", "r4.json", "--no-history"] + library, in: directory)
        #expect(byDate.status == 0)
        #expect((try Self.json(directory, "r4.json")["previous"] as? [String: Any])?["id"] as? Int == 2)
        let none = try CLI.run(["report", "--compare", "1999-01-01"] + library, in: directory)
        #expect(none.status == 2)
        let bad = try CLI.run(["report", "--compare", "yesterday"] + library, in: directory)
        #expect(bad.status == 2 && bad.stderr.contains("--compare \"yesterday\""))
    }
}
