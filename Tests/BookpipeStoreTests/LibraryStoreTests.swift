import BookpipeCore
import Foundation
import Testing
@testable import BookpipeStore

@Suite struct LibraryStoreTests {
    func temporaryLibrary() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path
    }

    func record(_ row: Int) -> BookRecord {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "abc", row: row, line: row + 1, format: "goodreads",
                                                     rawFields: ["x\"y", "=1+1", "é\n"]),
                                title: "Title \(row)", authors: ["A, B"], rawISBNs: ["=\"0439023483\""], year: 2001)
        record.normalized = NormalizedForms(searchTitle: "title \(row)", mainTitle: "title", titleKey: "title \(row)",
                                            series: "S", authors: ["B A"], authorKeys: ["b a"], isbn13: "9780439023481",
                                            allISBN13s: ["9780439023481"])
        record.addFinding(Finding(code: "x.y", severity: .warning, field: "ISBN", message: "a \"quoted\" message"))
        return record
    }

    @Test("A record survives the round trip through the file exactly")
    func roundTrip() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        let original = record(1)
        try store.insert([original])
        #expect(try store.records(ids: [original.id]) == [original])
    }

    @Test("Inserting the same rows again stores each once and keeps the first version")
    func idempotentInsert() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        #expect(try store.insert((1...10).map(record)) == 10)
        var changed = record(3)
        changed.title = "Changed"
        #expect(try store.insert([changed] + (5...12).map(record)) == 2)
        #expect(try store.counts().records == 12)
        #expect(try store.records(ids: ["abc:3"]).first?.title == "Title 3")
        let finished = try store.finishedRows(fileHash: "abc")
        #expect(finished.count == 12)
        #expect(finished.contains(12) && !finished.contains(13))
    }

    @Test("A file is complete only when every row is stored or rejected")
    func completion() throws {
        let store = try LibraryStore(path: temporaryLibrary())
        try store.registerSourceFile(SourceFileInfo(hash: "abc", path: "a.csv", format: "goodreads", header: ["t"],
                                                    encoding: "utf-8", size: 10), runID: nil)
        try store.insert((1...3).map(record))
        #expect(try store.finishSourceFile(hash: "abc", rowsTotal: 4) == false)
        try store.insertRejections([RejectedRow(fileHash: "abc", file: "a.csv", line: 9, row: 4, column: 1,
                                                reason: "unclosed quote", rawText: "\"x")], runID: nil)
        #expect(try store.finishSourceFile(hash: "abc", rowsTotal: 4) == true)
        #expect(try store.sourceFile(hash: "abc")?.isComplete == true)
    }

    @Test("A file that is not a database gives a message naming it")
    func notADatabase() throws {
        let path = temporaryLibrary()
        try Data("this is not sqlite, just text that is long enough to be read as a header".utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try LibraryStore(path: path)
        } throws: { error in
            "\(error)".hasPrefix("\(path): cannot")
        }
    }
}
