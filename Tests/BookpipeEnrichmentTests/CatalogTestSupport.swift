import Foundation
import Testing
@testable import BookpipeCatalog
@testable import BookpipeEnrichment

/// Paths of the samples and temporary catalogues for the catalogue tests.
enum CatalogSamples {
    /// The repository root, from this file's location (`<root>/Tests/BookpipeEnrichmentTests/…`).
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { repositoryRoot.appendingPathComponent(relative).path }

    /// `samples/catalog/openlibrary-sample.txt`.
    static var dump: String { path("samples/catalog/openlibrary-sample.txt") }

    /// The sample dump's lines.
    static func dumpLines() throws -> [String] {
        try String(contentsOfFile: dump, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// A new empty folder under the temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-catalog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A new, empty catalogue in its own temporary folder.
    static func emptyCatalog() throws -> (catalog: LocalCatalog, directory: URL) {
        let directory = try temporaryDirectory()
        return (try LocalCatalog(path: directory.appendingPathComponent("catalog.sqlite").path), directory)
    }

    /// A catalogue holding the sample dump.
    static func sampleCatalog() async throws -> LocalCatalog {
        let (catalog, _) = try emptyCatalog()
        let summary = try await catalog.import(dumpFile: dump)
        #expect(summary.skipped == 0)
        return catalog
    }

    /// Writes dump lines to a file in `directory`.
    static func writeDump(_ lines: [String], named name: String = "dump.txt", in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    /// One dump line for a record: the JSON gets `key`, `type` and `revision` added.
    static func line(type: String, key: String, revision: Int = 1, lastModified: String = "2026-01-01T00:00:00.000000",
                     _ fields: [String: Any]) throws -> String {
        var object = fields
        object["key"] = key
        object["type"] = ["key": "/type/\(type)"]
        object["revision"] = revision
        let json = String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        return ["/type/\(type)", key, String(revision), lastModified, json].joined(separator: "\t")
    }

    /// Splits one CSV line (quoted fields with doubled quotes; no line breaks inside fields).
    static func csvFields(_ line: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = Array(line).makeIterator()
        var pending: Character? = iterator.next()
        while let character = pending {
            pending = iterator.next()
            if quoted {
                if character == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = iterator.next()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields
    }

    /// `samples/expected-matches.csv`: (file, 1-based row) → expected work key, nil for absent books.
    static func expectedMatches() throws -> [String: [Int: String?]] {
        let text = try String(contentsOfFile: path("samples/expected-matches.csv"), encoding: .utf8)
        var result: [String: [Int: String?]] = [:]
        for line in text.split(separator: "\n").dropFirst() {
            let fields = csvFields(String(line))
            guard fields.count >= 4, let row = Int(fields[1]) else { continue }
            result[fields[0], default: [:]][row] = fields[3].isEmpty ? String?.none : fields[3]
        }
        return result
    }
}
