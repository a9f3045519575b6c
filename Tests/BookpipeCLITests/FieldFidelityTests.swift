import BookpipeStore
import Foundation
import Testing

/// Every field an import reads comes back out of the JSON, JSON lines and CSV exports under the
/// keys of docs/export-contract.md, through a real library file.
@Suite(.timeLimit(.minutes(5))) struct FieldFidelityTests {
    static let goodreadsHeader = "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,Condition Description,BCID"

    func exportObjects(_ directory: URL, format: String = "jsonl") throws -> [[String: Any]] {
        let result = try CLI.run(["export", "--format", format, "--library", "lib.sqlite"], in: directory)
        #expect(result.status == 0, "\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("A Goodreads row's shelf, rating, dates, publisher, pages, binding, review and tags come back out of JSON lines and CSV")
    func goodreadsFields() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let rows = [
            Self.goodreadsHeader,
            #"1,Dune,Frank Herbert,"Herbert, Frank",,"=""0441013597""","=""9780441013593""",5,4.27,Ace,Mass Market Paperback,604,2005,1965,2021/04/02,2021/03/05,"science-fiction, favourites","science-fiction (#3), favourites (#1)",read,"Spice, ""sand"" and"#,
            #"worms.",,,1,,,0,,,,,"#,
            #"2,Emma,Jane Austen,"Austen, Jane",,"=""""","=""""",0,3.9,,,,,,,2020/01/01,,,to-read,,,,0,,,0,,,,,"#,
        ]
        try (rows.joined(separator: "\n") + "\n").write(to: directory.appendingPathComponent("goodreads.csv"), atomically: true, encoding: .utf8)
        let imported = try CLI.run(["import", "goodreads.csv", "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let objects = try exportObjects(directory)
        #expect(objects.count == 2)
        let dune = objects[0]
        #expect(dune["shelf"] as? String == "read")
        #expect(dune["rating"] as? Double == 5)
        #expect(dune["dateAdded"] as? String == "2021/03/05")
        #expect(dune["dateRead"] as? String == "2021/04/02")
        #expect(dune["publisher"] as? String == "Ace")
        #expect(dune["pages"] as? Int == 604)
        #expect(dune["binding"] as? String == "Mass Market Paperback")
        #expect(dune["review"] as? String == "Spice, \"sand\" and\nworms.")
        #expect(dune["tags"] as? [String] == ["science-fiction", "favourites"])
        #expect(dune["rawISBNs"] as? [String] == ["=\"0441013597\"", "=\"9780441013593\""])
        #expect(dune["year"] as? Int == 1965)
        // An unrated book with empty cells: no keys for what the file did not hold.
        let emma = objects[1]
        #expect(emma["shelf"] as? String == "to-read")
        #expect(emma["dateAdded"] as? String == "2020/01/01")
        for key in ["rating", "dateRead", "publisher", "pages", "binding", "review", "tags"] {
            #expect(emma[key] == nil, "\(key)")
        }
        let csv = try CLI.run(["export", "--format", "csv", "--library", "lib.sqlite"], in: directory)
        let lines = csv.stdout.components(separatedBy: "\r\n")
        #expect(lines[0].hasSuffix(",findings,shelf,rating,dateAdded,dateRead,publisher,pages,binding,review,tags,rawISBNs,provenance,book"))
        #expect(csv.stdout.contains(",read,5,2021/03/05,2021/04/02,Ace,604,Mass Market Paperback,\"Spice, \"\"sand\"\" and\nworms.\","
                                    + "science-fiction; favourites,\"'=\"\"0441013597\"\"; =\"\"9780441013593\"\"\","),
                "\(csv.stdout)")
    }

    @Test("--map accepts binding, review and tags (and the older fields), and they come back out")
    func mappedFields() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try """
            Titel;Autor;Einband;Meinung;Etiketten;Regal;Sterne;Hinzu;Gelesen;Verlag;Seiten
            Der Process;Franz Kafka;Taschenbuch;Beklemmend;klassiker, prag;gelesen;4;2022-02-01;2022-03-01;Fischer;288

            """.write(to: directory.appendingPathComponent("de.csv"), atomically: true, encoding: .utf8)
        let map = "title=Titel,author=Autor,binding=Einband,review=Meinung,tags=Etiketten,shelf=Regal,rating=Sterne,"
            + "added=Hinzu,read=Gelesen,publisher=Verlag,pages=Seiten"
        let imported = try CLI.run(["import", "de.csv", "--map", map, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                                   in: directory)
        #expect(imported.status == 0, "\(imported.stderr)")
        let object = try #require(try exportObjects(directory).first)
        #expect(object["binding"] as? String == "Taschenbuch")
        #expect(object["review"] as? String == "Beklemmend")
        #expect(object["tags"] as? [String] == ["klassiker", "prag"])
        #expect(object["shelf"] as? String == "gelesen")
        #expect(object["rating"] as? Double == 4)
        #expect(object["dateAdded"] as? String == "2022-02-01")
        #expect(object["dateRead"] as? String == "2022-03-01")
        #expect(object["publisher"] as? String == "Fischer")
        #expect(object["pages"] as? Int == 288)
        let unknown = try CLI.run(["import", "de.csv", "--map", "mood=Meinung", "--no-enrich", "--library", "lib.sqlite",
                                   "--progress", "none"], in: directory)
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("title, author, isbn, year, publisher, pages, shelf, rating, added, read, binding, review, tags."),
                "\(unknown.stderr)")
    }

    @Test("A StoryGraph export's format, review and tags come back out; the wingtip Format column is unchanged")
    func storygraphFields() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = CLI.repositoryRoot.appendingPathComponent("samples/storygraph_export.csv").path
        #expect(try CLI.run(["import", sample, "--no-enrich", "--library", "lib.sqlite", "--progress", "none"],
                            in: directory).status == 0)
        let objects = try exportObjects(directory)
        #expect(objects.count == 11)
        #expect(objects.allSatisfy { $0["binding"] is String }, "StoryGraph's Format column")
        #expect(objects.allSatisfy { $0["shelf"] is String })
    }
}
