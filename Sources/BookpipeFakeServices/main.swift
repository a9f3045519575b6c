// bookpipe-fake-services: serves Open Library's and Google Books' APIs (exact formats) on
// 127.0.0.1 from the books of an Open Library dump file, with latency and a server-side rate
// limit. Used by benchmarks/enrichment (never by bookpipe itself).
//
//     bookpipe-fake-services --dump catalog.txt [--latency-ms 50] [--rate 5] [--google-rate 1]
//                            [--openlibrary-coverage 0.8] [--port 0]
//
// `--rate` limits Open Library (and Google Books unless `--google-rate` gives its own budget);
// `--openlibrary-coverage` is the share of books Open Library knows (the rest only Google has).
//
// Prints `listening http://127.0.0.1:PORT` once ready, then serves until SIGTERM/SIGINT, and
// prints the request count and rate-limit violations when it stops.
//
//     bookpipe-fake-services scan-backend [--sidecars DIR] [--job-seconds 3] [--max-jobs 4] …
//
// serves the fake vision backend instead (ScanBackendCommand.swift).
import BookpipeTesting
import Foundation

if CommandLine.arguments.dropFirst().first == "scan-backend" {
    ScanBackendCommand.run(CommandLine.arguments.dropFirst(2))
}

struct Options {
    var dump = ""
    var latencyMilliseconds = 0
    var rate: Double?
    var googleRate: Double?
    var openLibraryCoverage = 1.0
    var port: UInt16 = 0
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst().makeIterator()
    while let argument = arguments.next() {
        let value = arguments.next() ?? ""
        switch argument {
        case "--dump": options.dump = value
        case "--latency-ms": options.latencyMilliseconds = Int(value) ?? 0
        case "--rate": options.rate = Double(value)
        case "--google-rate": options.googleRate = Double(value)
        case "--openlibrary-coverage": options.openLibraryCoverage = Double(value) ?? 1
        case "--port": options.port = UInt16(value) ?? 0
        default:
            FileHandle.standardError.write(Data("unknown option \(argument)\nusage: bookpipe-fake-services --dump FILE [--latency-ms N] [--rate R] [--google-rate R] [--openlibrary-coverage S] [--port P]\n".utf8))
            exit(2)
        }
    }
    guard !options.dump.isEmpty else {
        FileHandle.standardError.write(Data("--dump FILE is required (Open Library dump format)\n".utf8))
        exit(2)
    }
    return options
}

/// One FakeBook per edition of the dump, with its work's title and authors.
func books(fromDump path: String) throws -> [FakeBook] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    var authors: [String: String] = [:]
    var works: [String: [String: Any]] = [:]
    var editions: [[String: Any]] = []
    for line in text.split(separator: "\n") {
        let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5,
              let object = try? JSONSerialization.jsonObject(with: Data(fields[4].utf8)) as? [String: Any] else { continue }
        switch fields[0] {
        case "/type/author": authors[String(fields[1])] = object["name"] as? String
        case "/type/work": works[String(fields[1])] = object
        case "/type/edition": editions.append(object)
        default: break
        }
    }
    func year(_ text: String?) -> Int? {
        guard let text, let match = text.firstMatch(of: /(1[5-9]|20)[0-9]{2}/) else { return nil }
        return Int(match.output.0)
    }
    return editions.compactMap { edition in
        let workKey = ((edition["works"] as? [[String: Any]])?.first?["key"] as? String)
        let work = workKey.flatMap { works[$0] }
        let authorKeys = ((edition["authors"] as? [[String: Any]]) ?? [])
            .compactMap { $0["key"] as? String }
        let workAuthorKeys = ((work?["authors"] as? [[String: Any]]) ?? [])
            .compactMap { ($0["author"] as? [String: Any])?["key"] as? String }
        let names = (authorKeys.isEmpty ? workAuthorKeys : authorKeys).compactMap { authors[$0] }
        guard let title = (work?["title"] as? String) ?? (edition["title"] as? String) else { return nil }
        return FakeBook(
            title: title, subtitle: (work?["subtitle"] as? String) ?? (edition["subtitle"] as? String), authors: names,
            year: year(work?["first_publish_date"] as? String) ?? year(edition["publish_date"] as? String),
            isbn13: (edition["isbn_13"] as? [String])?.first, isbn10: (edition["isbn_10"] as? [String])?.first,
            workKey: workKey, editionKey: edition["key"] as? String)
    }
}

let options = parseOptions()
let loaded: [FakeBook]
do {
    loaded = try books(fromDump: options.dump)
} catch {
    FileHandle.standardError.write(Data("\(options.dump): cannot read: \(error)\n".utf8))
    exit(1)
}
let services = FakeBookServices(books: loaded, configuration: .init(
    latency: .milliseconds(options.latencyMilliseconds),
    rateLimit: options.rate.map { FakeBookServices.RateLimit(requestsPerSecond: $0) },
    googleBooksRateLimit: options.googleRate.map { FakeBookServices.RateLimit(requestsPerSecond: $0) },
    openLibraryCoverage: options.openLibraryCoverage))
do {
    _ = try services.start()
} catch {
    FileHandle.standardError.write(Data("cannot listen: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data("listening \(services.baseURL) (\(loaded.count) editions)\n".utf8))

serveUntilStopped {
    let log = services.requestLog
    let google = log.filter { $0.service == .googleBooks }.count
    FileHandle.standardOutput.write(Data(
        ("requests \(log.count) (openlibrary \(log.count - google), googlebooks \(google)) "
         + "rate-limit-violations \(services.rateLimitViolations)\n").utf8))
    services.stop()
}
