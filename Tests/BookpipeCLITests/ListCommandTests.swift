import BookpipeTesting
import Foundation
import Testing

/// `bookpipe list`, `remove` and `forget` through the built binary, on real exports from
/// `../shared/fixtures/real` (a German Goodreads export of 1,451 rows and a StoryGraph export of 193).
@Suite(.timeLimit(.minutes(5)), .enabled(if: TestFixtures.sharedAvailable))
struct ListCommandTests {
    static let goodreads = "goodreads_31col_de.csv"
    static let storygraph = "storygraph_23col_crlf.csv"
    static let library = ["--library", "lib.sqlite"]

    /// A folder holding copies of `files`, imported (without enrichment) in one run each.
    static func imported(_ files: [String] = [goodreads, storygraph], library: [String] = library) throws -> URL {
        let directory = try CLI.temporaryDirectory()
        for file in files {
            let copy = directory.appendingPathComponent(file)
            if !FileManager.default.fileExists(atPath: copy.path) {
                try FileManager.default.copyItem(at: URL(fileURLWithPath: TestFixtures.path("real/" + file)), to: copy)
            }
            let result = try CLI.run(["import", file, "--no-enrich", "--progress", "none"] + library, in: directory)
            #expect(result.status == 0, "\(result.stderr)")
        }
        return directory
    }

    static func list(_ arguments: [String], in directory: URL) throws -> CLI.Result {
        try CLI.run(["list"] + arguments + library, in: directory)
    }

    @Test("list: field queries and words, case and accents aside; --format, --fields, --sort, --json; exit 1 when nothing matches")
    func fieldQueries() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let orwell = try Self.list(["AUTHOR:orwell"], in: directory)
        #expect(orwell.status == 0, "\(orwell.stderr)")
        #expect(orwell.stdout == """
            333  6fd9ae35:333  pending  Animal Farm — George Orwell; Russell Baker; C.M. Woodhouse
            334  6fd9ae35:334  pending  1984 — George Orwell

            """)
        let sorted = try Self.list(["year:1940..1950", "author:orwell", "--sort", "year-", "--format", "{year}: {title} ({shelf})"],
                                   in: directory)
        #expect(sorted.stdout == "1949: 1984 (to-read)\n1945: Animal Farm (to-read)\n")
        #expect(try Self.list(["neruda", "year:..1924", "--fields", "year,title"], in: directory).stdout == """
            1924  Veinte poemas de amor y una canción de desesperada / Cien sonetos de amor
            1924  Twenty Love Poems and a Song of Despair

            """)
        // Diacritics aside: "garcia" finds García, in an author list.
        #expect(try Self.list(["author:garcia", "title:twenty", "--fields", "number"], in: directory).stdout == "497\n")
        let storygraphToRead = try Self.list(["file:storygraph", "shelf:TO-READ", "--fields", "shelf"], in: directory)
        #expect(storygraphToRead.stdout.split(separator: "\n").count == 128)
        #expect(Set(storygraphToRead.stdout.split(separator: "\n")) == ["to-read"])
        let everyStoryGraph = try Self.list(["file:storygraph", "--fields", "number"], in: directory).stdout.split(separator: "\n")
        let notToRead = try Self.list(["file:storygraph", "^shelf:to-read", "--fields", "number"], in: directory).stdout.split(separator: "\n")
        #expect(everyStoryGraph.count == 193 && notToRead.count == 193 - 128)

        let json = try Self.list(["rating:>=4.5", "file:storygraph", "--limit", "3", "--json"], in: directory)
        let objects = try json.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == 3)
        for object in objects {
            #expect((object["rating"] as? Double).map { $0 >= 4.5 } == true)
            #expect(object["file"] as? String == Self.storygraph)
            #expect(object["number"] is Int && object["id"] is String && object["status"] as? String == "pending")
        }
        #expect(try CLI.nonCanonicalJSONLines(json.stdout) == [])

        let none = try Self.list(["author:orwell", "year:2020.."], in: directory)
        #expect(none.status == 1 && none.stdout == "")
        #expect(none.stderr == "no record matches \"author:orwell year:2020..\"\n")
        let bad = try Self.list(["rating:>=x"], in: directory)
        #expect(bad.status == 2)
        #expect(bad.stderr.hasPrefix("Error: \"rating:>=x\": \"x\" is not a number; write N, A..B, A.., ..B, >N, >=N, <N or <=N.\n"))
        let unknown = try Self.list(["autor:orwell"], in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("Error: \"autor:orwell\": no field \"autor\". Fields: title, author, isbn, year, shelf, status, review, rating, file, gone"))
        let template = try Self.list(["--format", "{title} {colour}"], in: directory)
        #expect(template.status == 2 && template.stderr.contains("\"{colour}\": the value must be one of number, id, shortid, title"))
        let missing = try CLI.run(["list", "--library", "none.sqlite"], in: directory)
        #expect(missing.status == 1 && !FileManager.default.fileExists(atPath: directory.appendingPathComponent("none.sqlite").path))
    }

    @Test("Numbers are given once and never again; show and remove take a number or an id with a shortened hash")
    func numbersAndShortIDs() throws {
        let directory = try Self.imported([Self.storygraph])
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try Self.list(["--limit", "2", "--fields", "number,shortid,title"], in: directory)
        #expect(first.stdout == "1  66051005:1  Shuggie Bain\n2  66051005:2  Queenie\n")
        let byNumber = try CLI.run(["show", "2"] + Self.library, in: directory)
        let byShortID = try CLI.run(["show", "66051005:2"] + Self.library, in: directory)
        #expect(byNumber.status == 0 && byNumber.stdout.hasPrefix("66051005427dc461121965ee92505a54:2  pending"))
        #expect(byShortID.stdout == byNumber.stdout)
        // Digits alone are a number; a hash prefix with a letter in it names the file's records.
        let ambiguous = try CLI.run(["show", "66051005427d"] + Self.library, in: directory)
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains("66051005427d names more than one record"))

        let removed = try CLI.run(["remove", "2", "--yes"] + Self.library, in: directory)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout == "2  66051005:2  pending  Queenie — Candice Carty-Williams\n")
        #expect(try CLI.run(["show", "2"] + Self.library, in: directory).status == 1)
        let removedStory = try CLI.run(["show", "66051005:2"] + Self.library, in: directory)
        #expect(removedStory.status == 1)
        #expect(removedStory.stderr.hasPrefix("lib.sqlite: record 66051005427dc461121965ee92505a54:2 (\"Queenie\") was removed by `bookpipe remove` on 20"),
                "\(removedStory.stderr)")
        // The row comes back only when its file is forgotten and imported again: under a new number.
        #expect(try CLI.run(["forget", Self.storygraph, "--yes"] + Self.library, in: directory).status == 0)
        #expect(try CLI.run(["import", Self.storygraph, "--no-enrich", "--progress", "none"] + Self.library, in: directory).status == 0)
        let again = try Self.list(["title:queenie", "--fields", "number,shortid"], in: directory)
        #expect(again.stdout == "\(193 + 2)  66051005:2\n")
    }

    @Test("remove lists what it removes; without a terminal it needs --yes; --dry-run and an empty query remove nothing; nothing else changes")
    func remove() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try CLI.run(["export", "--format", "jsonl"] + Self.library, in: directory).stdout

        let asked = try CLI.run(["remove", "author:orwell"] + Self.library, in: directory, input: "y\n")
        #expect(asked.status == 2)
        #expect(asked.stderr.hasPrefix("Error: Standard input is not a terminal to ask on: pass --yes to go ahead (or --dry-run to look).\n"))
        let dry = try CLI.run(["remove", "author:orwell", "--dry-run"] + Self.library, in: directory)
        #expect(dry.status == 0)
        #expect(dry.stdout.split(separator: "\n").count == 2)
        #expect(dry.stderr == "dry run: would remove 2 records from lib.sqlite; nothing removed.\n")
        for empty in [["remove"], ["remove", " - "]] {
            let refused = try CLI.run(empty + Self.library, in: directory)
            #expect(refused.status == 2 && refused.stderr.contains("an empty query would remove every record"), "\(empty)")
        }
        let nothing = try CLI.run(["remove", "author:nobodyatall", "--yes"] + Self.library, in: directory)
        #expect(nothing.status == 1 && nothing.stderr == "no record matches \"author:nobodyatall\"\n")
        #expect(try CLI.run(["export", "--format", "jsonl"] + Self.library, in: directory).stdout == before)

        let removed = try CLI.run(["remove", "author:orwell", "--yes"] + Self.library, in: directory)
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stderr == "removed 2 records from lib.sqlite (each logged in its change log).\n")
        let goneIDs = ["6fd9ae35", "333", "334"]
        let after = try CLI.run(["export", "--format", "jsonl"] + Self.library, in: directory).stdout
        let expected = before.split(separator: "\n").filter { line in
            !(line.contains("\"id\":\"\(goneIDs[0])") && (line.contains(":\(goneIDs[1])\"") || line.contains(":\(goneIDs[2])\"")))
        }
        #expect(after.split(separator: "\n") == expected)
        #expect(expected.count == 1644 - 2)
        let stats = try CLI.run(["stats"] + Self.library, in: directory).stdout
        #expect(stats.contains("lib.sqlite: 1642 records, 0 rejected rows\n"))
        #expect(stats.contains("\(Self.goodreads) (goodreads): 1449 records, 0 rejected, complete"))
        #expect(try Self.list(["author:orwell"], in: directory).status == 1)

        // The file stays imported: the same bytes again bring nothing back.
        let again = try CLI.run(["import", Self.goodreads, "--no-enrich", "--progress", "none"] + Self.library, in: directory)
        #expect(again.status == 0)
        #expect(again.stderr.contains("\(Self.goodreads): already imported (1451 rows); nothing changed."), "\(again.stderr)")
        #expect(try Self.list(["author:orwell"], in: directory).status == 1)
    }

    @Test("forget FILE leaves exactly the library that never imported it; the file can be imported again; by path when it is gone")
    func forget() throws {
        let directory = try Self.imported()
        defer { try? FileManager.default.removeItem(at: directory) }
        let onlyGoodreads = ["--library", "only.sqlite"]
        _ = try CLI.run(["import", Self.goodreads, "--no-enrich", "--progress", "none"] + onlyGoodreads, in: directory)

        let refused = try CLI.run(["forget", Self.storygraph] + Self.library, in: directory)
        #expect(refused.status == 2)
        let forgotten = try CLI.run(["forget", Self.storygraph, "--yes"] + Self.library, in: directory)
        #expect(forgotten.status == 0, "\(forgotten.stderr)")
        #expect(forgotten.stderr == "forgot \(Self.storygraph): removed 193 records and 0 rejected rows from lib.sqlite."
            + " Importing it again reads it as new.\n")
        for command in [["export", "--format", "jsonl"], ["list", "--fields", "id,title,shelf,rating"], ["rejected"]] {
            #expect(try CLI.run(command + Self.library, in: directory).stdout == CLI.run(command + onlyGoodreads, in: directory).stdout,
                    "\(command)")
        }
        let stats = try CLI.run(["stats"] + Self.library, in: directory).stdout
        #expect(stats.contains("files imported: 1\n  \(Self.goodreads) (goodreads): 1451 records"))
        #expect(try CLI.run(["forget", Self.storygraph, "--yes"] + Self.library, in: directory).status == 1)

        let reimported = try CLI.run(["import", Self.storygraph, "--no-enrich", "--progress", "none"] + Self.library, in: directory)
        #expect(reimported.stderr.contains("193 imported"), "\(reimported.stderr)")
        // By the path it was imported from, once the file is no longer there.
        try FileManager.default.removeItem(at: directory.appendingPathComponent(Self.storygraph))
        let byPath = try CLI.run(["forget", Self.storygraph, "--yes"] + Self.library, in: directory)
        #expect(byPath.status == 0 && byPath.stderr.contains("removed 193 records"), "\(byPath.stderr)")
        let unknown = try CLI.run(["forget", "never.csv", "--yes"] + Self.library, in: directory)
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "lib.sqlite: never.csv was never imported here (no such file, and no import from that path).\n")
    }

    @Test("On a terminal, remove asks: anything but y keeps the records, y removes them",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func removeAsksOnATerminal() throws {
        let directory = try Self.imported([Self.storygraph])
        defer { try? FileManager.default.removeItem(at: directory) }
        // script(1) gives the command a terminal for standard input and output.
        func onTerminal(_ answer: String) throws -> CLI.Result {
            try CLI.run(["-qec", "\(CLI.binary.path) remove title:queenie --library lib.sqlite", "/dev/null"], in: directory,
                        executable: URL(fileURLWithPath: "/usr/bin/script"), input: answer)
        }
        let kept = try onTerminal("n\n")
        #expect(kept.stdout.contains("Remove 1 record from lib.sqlite? [y/N] nothing removed."), "\(kept.stdout)")
        #expect(try Self.list(["title:queenie"], in: directory).status == 0)
        let removed = try onTerminal("y\n")
        #expect(removed.stdout.contains("[y/N] removed 1 record from lib.sqlite"), "\(removed.stdout)")
        #expect(try Self.list(["title:queenie"], in: directory).status == 1)
    }
}
