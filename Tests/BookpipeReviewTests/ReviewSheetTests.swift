import BookpipeCore
import BookpipeImaging
import BookpipeIngest
import BookpipePipeline
import BookpipeReview
import BookpipeStages
import BookpipeStore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ReviewSheetTests {
    static let hostileTitle = "<script>alert(1)</script>"
    static let hostileAuthor = "O'Brien $(rm -rf /)"

    /// A scan file with two scans: one whose photo exists (two unsure detections, one of them
    /// hostile), one whose photo is missing (one unsure detection).
    static func writeHostileScan(in fixture: ScanFixture) throws {
        let scan: [String: Any] = [
            "format": "bookshelf-scan", "version": 1,
            "scans": [
                ["scanId": "with-photo", "originalImagePath": "shelf.jpg",
                 "books": [
                    ["title": hostileTitle, "author": hostileAuthor, "confidence": 0.2,
                     "boundingBox": ["x": 0.1, "y": 0.1, "width": 0.2, "height": 0.8]],
                    ["title": "Dune", "author": "Frank Herbert", "confidence": 0.3,
                     "boundingBox": ["x": 0.5, "y": 0.1, "width": 0.1, "height": 0.8]],
                    ["title": "Emma", "author": "Jane Austen", "confidence": 0.9],
                 ]],
                ["scanId": "no-photo", "originalImagePath": "missing.jpg",
                 "books": [["title": "Beloved", "author": "Toni Morrison", "confidence": 0.4]]],
            ],
        ]
        try JSONSerialization.data(withJSONObject: scan).write(to: URL(fileURLWithPath: fixture.scan))
    }

    @Test("ShellQuoting keeps plain words and makes quotes, $(…), backticks and spaces inert")
    func shellQuoting() {
        #expect(ShellQuoting.quote("ab12:3") == "ab12:3")
        #expect(ShellQuoting.quote("") == "''")
        #expect(ShellQuoting.quote(Self.hostileAuthor) == #"'O'\''Brien $(rm -rf /)'"#)
        #expect(ShellQuoting.quote("a`b` c;d") == "'a`b` c;d'")
        #expect(ShellQuoting.option("--title", "--all") == "--title=--all")
        #expect(ShellQuoting.option("--author", "O'Brien") == #"--author='O'\''Brien'"#)
        #expect(ShellQuoting.libraryOption("library.sqlite") == "")
        #expect(ShellQuoting.libraryOption("my lib.sqlite") == " --library 'my lib.sqlite'")
        #expect(ShellQuoting.libraryOption("-odd.sqlite") == " --library=-odd.sqlite")
    }

    @Test("The sheet shows every queued item once, each with its own crop; the item without a photo says so; data text is escaped, commands shell-quoted")
    func sheetEscapesAndQuotes() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        try Self.writeHostileScan(in: fixture)
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let sheet = ReviewSheet(queue: queue, libraryPath: "my library.sqlite")

        let items = try await sheet.items()
        #expect(items.count == 3)
        let withPhoto = items.filter { $0.crop != nil }
        #expect(withPhoto.count == 2)
        for item in withPhoto {
            let header = try ImageDecoder().header(of: item.crop!, file: item.id)
            #expect(header.height > header.width, "a spine crop is tall: \(header)")
        }
        #expect(withPhoto[0].crop != withPhoto[1].crop)
        let noPhoto = try #require(items.first { $0.title == "Beloved" })
        #expect(noPhoto.crop == nil, "\(noPhoto)")
        #expect(noPhoto.cropNote?.hasPrefix("no photo: the photo was refused at import (") == true, "\(String(describing: noPhoto.cropNote))")
        #expect(noPhoto.cropNote?.contains("missing.jpg") == true && noPhoto.cropNote?.hasSuffix("; review is text only") == true)

        let hostile = try #require(items.first { $0.title == Self.hostileTitle })
        #expect(hostile.editCommand == "bookpipe review edit \(hostile.id) --title='<script>alert(1)</script>'"
                + #" --author='O'\''Brien $(rm -rf /)' --library 'my library.sqlite'"#)
        #expect(hostile.verifyCommand == "bookpipe review verify \(hostile.id) --library 'my library.sqlite'")

        let written = try await sheet.write(to: fixture.folder + "/sheet")
        #expect(written.items == 3 && written.crops == 2)
        let html = try String(contentsOfFile: written.page, encoding: .utf8)
        #expect(!html.contains("<script"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(html.contains("O&#39;Brien $(rm -rf /)"))
        #expect(html.components(separatedBy: "<img src=\"data:image/jpeg;base64,").count - 1 == 2)
        #expect(html.components(separatedBy: "<section class=\"item\"").count - 1 == 3)
        #expect(html.contains("no photo: the photo was refused at import"))
        #expect(html.contains("default-src 'none'"))
        // The quoted command survives HTML escaping: unescaped, it is exactly the command.
        let unescaped = html.replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&quot;", with: "\"")
            .replacingOccurrences(of: "&amp;", with: "&")
        #expect(unescaped.contains("<pre>" + hostile.editCommand + "</pre>"))
    }

    @Test("The sheet shows a match item's candidates with their scores and prints only commands that work")
    func sheetShowsCandidatesAndOnlyWorkingCommands() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        let queue = try await ReviewListTests.mixedLibrary(fixture)
        let store = try LibraryStore(path: fixture.library)
        // One match with two candidates: the book, and one by another author.
        let dune = try #require(try await queue.list(kind: .match).first { $0.title == "Dune" })
        var record = try #require(try store.records(ids: [dune.id]).first)
        record.enrichment = EnrichmentResult(status: .needsCandidateSelection, candidates: [
            Candidate(workKey: "/works/OL1W", title: "Dune", authors: ["Frank Herbert"], year: 1965, source: "openlibrary",
                      score: 150, breakdown: ["title": 100, "author": 50, "year": 0, "isbn": 0]),
            Candidate(workKey: "/works/OL2W", title: "Dune", authors: ["Brian Herbert"], source: "googlebooks",
                      score: 125, breakdown: ["title": 100, "author": 25, "year": 0, "isbn": 0]),
            Candidate(workKey: "/works/OL3W", title: "Dune", authors: ["Someone Else"], source: "googlebooks",
                      score: 100, breakdown: ["title": 100, "author": 0, "year": 0, "isbn": 0]),
        ])
        try await store.update([record])
        let items = try await ReviewSheet(queue: queue, libraryPath: "library.sqlite").items()
        let item = try #require(items.first { $0.id == dune.id })
        #expect(item.verifyCommand == nil, "review verify refuses an uncertain match; the sheet must not offer it")
        #expect(item.choices.map(\.summary) == [
            "Dune — Frank Herbert (1965, openlibrary) · score 150: title 100, author 50, year 0, isbn 0",
            "Dune — Brian Herbert (googlebooks) · score 125: title 100, author 25, year 0, isbn 0",
            "Dune — Someone Else (googlebooks) · score 100: title 100, author 0, year 0, isbn 0",
        ])
        #expect(item.choices.map(\.command) == (1...3).map { "bookpipe review choose \(dune.id) \($0)" })
        #expect(item.choices.map { $0.caution != nil } == [false, false, true])
        #expect(item.noneCommand == "bookpipe review choose \(dune.id) --none")
        // A scan detection still offers verify.
        let detection = try #require(items.first { $0.kind == .scan })
        #expect(detection.verifyCommand != nil && detection.choices.isEmpty)
        let html = try ReviewSheet(queue: queue, libraryPath: "library.sqlite").html(items)
        #expect(html.contains("Dune — Someone Else (googlebooks) · score 100"))
        #expect(!html.contains("bookpipe review verify \(dune.id)"))
        // Every printed command parses: the verify the tool would refuse is not among them.
        for command in items.flatMap({ [$0.verifyCommand, $0.noneCommand].compactMap { $0 } + $0.choices.map(\.command) }) {
            #expect(command.hasPrefix("bookpipe review "))
        }
    }

    @Test("A crop that cannot be made says why on the sheet: the photo's copy is cut off")
    func sheetSaysWhyACropFailed() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let name = try #require(try queue.photos.storedNames().first)
        let copy = try FileIO.read(queue.photos.folder + "/" + name)
        try FileIO.write(Array(copy.prefix(copy.count / 3)), to: queue.photos.folder + "/" + name)
        let items = try await ReviewSheet(queue: queue, libraryPath: "library.sqlite").items()
        #expect(items.count == 3 && items.allSatisfy { $0.crop == nil })
        #expect(items.allSatisfy {
            $0.cropNote == "crop failed: the photo's copy \(queue.photos.folder)/\(name) is cut off (Premature end of JPEG file); review is text only"
        }, "\(items.map(\.cropNote))")
    }

    @Test("An output path that is a file is refused with what to pass, before anything is made; the file is left as it was")
    func outputIsAFile() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let file = fixture.folder + "/notes.html"
        try Data("mine".utf8).write(to: URL(fileURLWithPath: file))
        let sheet = ReviewSheet(queue: try ReviewQueue(libraryPath: fixture.library), libraryPath: "library.sqlite")
        let error = await #expect(throws: ReviewSheetError.self) { try await sheet.write(to: file) }
        #expect(error?.description == "\(file) is a file, and --output takes a folder (the page is written as index.html in it). "
                + "Pass a folder, new or existing, e.g. --output review-sheet; the file was left as it was.")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "mine")
    }

    @Test("A queue longer than a page is written as linked pages made one at a time: each item once, numbered on, at most the page size per page")
    func pagedSheet() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        let books = (1...7).map { number -> [String: Any] in
            ["title": "Book \(number)", "author": "Author \(number)", "confidence": 0.1,
             "boundingBox": ["x": 0.1 * Double(number), "y": 0.1, "width": 0.05, "height": 0.8]]
        }
        try JSONSerialization.data(withJSONObject: ["photo": "shelf.jpg", "detections": books])
            .write(to: URL(fileURLWithPath: fixture.scan))
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let sheet = ReviewSheet(queue: queue, libraryPath: "library.sqlite", pageSize: 3)
        let all = try await sheet.items()
        #expect(all.count == 7)
        #expect(try await sheet.items(offset: 3, limit: 3).map(\.id) == all[3..<6].map(\.id))

        let written = try await sheet.write(to: fixture.folder + "/sheet")
        #expect(written.pages == 3 && written.items == 7 && written.crops == 7)
        #expect(written.page == fixture.folder + "/sheet/index.html")
        let names = ["index.html", "page-2.html", "page-3.html"]
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.folder + "/sheet").sorted() == names)
        let pages = try names.map { try String(contentsOfFile: fixture.folder + "/sheet/" + $0, encoding: .utf8) }
        #expect(pages.map { $0.components(separatedBy: "<section class=\"item\"").count - 1 } == [3, 3, 1])
        #expect(pages.map { $0.components(separatedBy: "<img src=\"data:image/jpeg;base64,").count - 1 } == [3, 3, 1])
        // Every item once, in queue order, numbered on across the pages.
        for (index, item) in all.enumerated() {
            let page = index / 3
            #expect(pages[page].contains("id=\"item-\(index + 1)\""), "item \(index + 1) on page \(page + 1)")
            #expect(pages.filter { $0.contains("<bdi>\(item.id)</bdi>") }.count == 1, "\(item.id)")
        }
        #expect(pages.allSatisfy { $0.contains("7 items to review") })
        #expect(pages[1].contains("page 2 of 3 (items 4–6)"))
        #expect(pages[1].contains("<a href=\"index.html\" rel=\"prev\">") && pages[1].contains("<a href=\"page-3.html\" rel=\"next\">"))
        #expect(!pages[0].contains("rel=\"prev\"") && !pages[2].contains("rel=\"next\""))
        #expect(pages[2].contains("<a href=\"page-2.html\">2</a> <strong>3</strong>"))

        // A queue that fits on one page has no page links.
        let single = try await ReviewSheet(queue: queue, libraryPath: "library.sqlite").write(to: fixture.folder + "/one")
        #expect(single.pages == 1 && single.items == 7)
        #expect(!(try String(contentsOfFile: single.page, encoding: .utf8)).contains("<nav"))
    }

    @Test("An empty queue makes a page that says nothing needs review")
    func emptySheet() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        _ = try await queue.verifyAll()
        let written = try await ReviewSheet(queue: queue, libraryPath: "library.sqlite").write(to: fixture.folder + "/sheet")
        #expect(written.items == 0)
        #expect(try String(contentsOfFile: written.page, encoding: .utf8).contains("Nothing needs review."))
    }

    @Test("The walk writes each decision at once: verify, skip, edit (an empty line keeps a field), and quit keeps the rest queued")
    func scriptedWalk() async throws {
        let fixture = try ScanFixture()
        defer { fixture.remove() }
        _ = try await fixture.importScan()
        let queue = try ReviewQueue(libraryPath: fixture.library)
        let ids = try await queue.list().map(\.id)
        #expect(ids.count == 3)
        var answers = ["v", "what", "s", "e", "", "", "e", "", "Stephen King; Someone Else", "q"][...]
        var output = ""
        let summary = try await ReviewWalk(queue: queue).run(readLine: { answers.popFirst() }, write: { output += $0 })
        #expect(summary.verified == 1 && summary.skipped == 1 && summary.edited == 1 && !summary.quit)
        #expect(output.contains("answer v, e, c, s or q"))
        #expect(output.contains("nothing changed; answer v to verify it as it is"))
        let records = try await queue.store.records(ids: ids)
        #expect(records.first { $0.id == ids[0] }?.reviewStatus == .verified)
        #expect(records.first { $0.id == ids[1] }?.reviewStatus == .needsReview)
        let edited = try #require(records.first { $0.id == ids[2] })
        #expect(edited.reviewStatus == .userEdited)
        #expect(edited.title == "IT" && edited.authors == ["Stephen King", "Someone Else"])
        let provenance = try await queue.store.provenance(of: edited)
        #expect(provenance["authors"] != provenance["title"], "only the authors were edited: \(provenance)")
        #expect(try await queue.list().map(\.id) == [ids[1]])
    }
}
