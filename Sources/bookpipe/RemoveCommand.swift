import ArgumentParser
import BookpipeCore
import BookpipeIngest
import BookpipeStore
import Foundation

/// `bookpipe remove QUERY|ID…`: removes records, after showing them and asking.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Removes the records a query matches, or records named by number or id; lists them and asks first.",
        discussion: """
            Name records by their number in `bookpipe list` (12), by id (<file hash>:<row>, the hash shortened to \
            any unique prefix: 1bd89140:3), or give a query as `bookpipe list` takes it (author:herbert shelf:to-read). \
            Each removal is logged in the record's change log; nothing else in the library changes. The file the \
            records came from stays imported: importing it again does not bring them back (`bookpipe forget FILE` \
            removes a whole import and lets the file be imported again).
            Without a terminal to ask on, pass --yes. Exit 1 when nothing matches.
            """)

    @Argument(help: "A query (as `list` takes it), or record numbers and ids.")
    var query: [String] = []

    @Flag(help: "Remove without asking.")
    var yes = false

    @Flag(help: "List what would be removed; remove nothing.")
    var dryRun = false

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        _ = try target()
    }

    /// What to remove: records named one by one, or a query.
    enum Target {
        case references([RecordReference])
        case query(LibraryQuery)
    }

    func target() throws -> Target {
        let references = query.compactMap(RecordReference.named)
        if !references.isEmpty {
            guard references.count == query.count else {
                throw ValidationError("Give record numbers and ids, or a query, not both: \(query.joined(separator: " ")).")
            }
            return .references(references)
        }
        let parsed: LibraryQuery
        do {
            parsed = try LibraryQuery.parse(query)
        } catch {
            throw ValidationError(error.description)
        }
        guard !parsed.isEmpty else {
            throw ValidationError("Give a query or record numbers/ids to remove; an empty query would remove every record.")
        }
        return .query(parsed)
    }

    func run() async throws {
        let target = try target()
        let store: any Library = LibraryLocation.isServer(library.libraryPath)
            ? try openExistingAnyLibrary(library) : try await openListing(library, for: LibraryQuery(), forWriting: true)
        var chosen: [ListedRecord] = []
        do {
            switch target {
            case .query(let query):
                try await store.listRecords(query, order: [], limit: nil) { chosen.append($0) }
            case .references(let references):
                // Numbers are given when records are first listed: a record never listed gets its number now.
                _ = try await store.refreshListing()
                var ids: [String] = []
                for reference in references {
                    let found = try await store.recordIDs(for: reference, limit: 2)
                    guard found.count == 1 else {
                        printError(found.isEmpty ? "\(library.libraryPath): no record \(reference). Find numbers and ids with `bookpipe list`."
                            : "\(library.libraryPath): \(reference) names more than one record (\(found.joined(separator: ", ")), …); give more of the id.")
                        try? await store.close()
                        throw ExitCode(1)
                    }
                    if !ids.contains(found[0]) { ids.append(found[0]) }
                }
                try await store.listRecords(LibraryQuery([.init(.ids(ids))]), order: [], limit: nil) { chosen.append($0) }
                let order = Dictionary(uniqueKeysWithValues: ids.enumerated().map { ($1, $0) })
                chosen.sort { order[$0.record.id, default: 0] < order[$1.record.id, default: 0] }
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
        guard !chosen.isEmpty else {
            try? await store.close()
            printError("no record matches \"\(query.joined(separator: " "))\"")
            throw ExitCode(1)
        }
        let template = try ListingTemplate(ListingTemplate.standard)
        for listed in chosen { print(TerminalText.inert(template.render(listed))) }
        let what = chosen.count == 1 ? "1 record" : "\(chosen.count) records"
        guard try await goesAhead(dryRun ? "would remove \(what) from \(library.libraryPath)" : nil,
                                  asking: "Remove \(what) from \(library.libraryPath)?", yes: yes, store: store) else { return }
        do {
            let removed = try await store.removeRecords(ids: chosen.map(\.record.id), command: "remove", at: Date())
            try await store.close()
            printError("removed \(removed.count == 1 ? "1 record" : "\(removed.count) records") from \(library.libraryPath)"
                + " (each logged in its change log).")
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
    }
}

/// `bookpipe forget FILE`: removes everything an import of a file brought.
struct ForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Removes every record an import of FILE brought, its rejected rows and its registration; asks first.",
        discussion: """
            FILE is found by its content (the same bytes imported under any name), or by the path it was imported \
            from when it is no longer there. Each removal is logged; nothing else in the library changes. \
            Afterwards the file can be imported again as new. Without a terminal to ask on, pass --yes.
            """)

    @Argument(help: "The imported file (or the path it was imported from).")
    var file: String

    @Flag(help: "Forget without asking.")
    var yes = false

    @Flag(help: "Say what would be removed; remove nothing.")
    var dryRun = false

    @OptionGroup var library: LibraryOptions

    func run() async throws {
        if !LibraryLocation.isServer(library.libraryPath) { try requireExistingLibrary(library) }
        let store: any Library
        do {
            store = try LibraryLocation.open(library.libraryPath, access: .readWrite)
        } catch {
            printError(error.description)
            throw ExitCode(1)
        }
        let known: SourceFileInfo
        var records = 0
        do {
            let files = try await store.sourceFiles()
            let hash = Self.fingerprint(of: file)
            guard let match = files.first(where: { $0.hash == hash }) ?? files.first(where: { $0.path == file }) else {
                try? await store.close()
                printError("\(library.libraryPath): \(file) was never imported here"
                    + (hash == nil ? " (no such file, and no import from that path)." : " (no import has the same content)."))
                throw ExitCode(1)
            }
            known = match
            records = try await store.countRecords(statuses: RecordStatus.allCases, fileHashes: [match.hash])
        } catch let exit as ExitCode {
            throw exit
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
        let rejected = (try? await store.rejections().filter { $0.fileHash == known.hash }.count) ?? 0
        let what = "\(records == 1 ? "1 record" : "\(records) records") and \(rejected == 1 ? "1 rejected row" : "\(rejected) rejected rows")"
            + " imported from \(known.path)"
        guard try await goesAhead(dryRun ? "would forget \(what)" : nil, asking: "Forget \(what)?", yes: yes,
                                  store: store) else { return }
        do {
            let forgotten = try await store.forgetSourceFile(hash: known.hash, command: "forget", at: Date())
            try await store.close()
            printError("forgot \(known.path): removed \(forgotten?.records ?? 0) records and \(forgotten?.rejectedRows ?? 0) rejected rows"
                + " from \(library.libraryPath). Importing it again reads it as new.")
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
    }

    /// The content fingerprint of the file at `path` (the first half of its records' ids); nil
    /// when it cannot be read.
    static func fingerprint(of path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        var fingerprint = ContentFingerprint()
        while true {
            guard let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty else { break }
            chunk.withUnsafeBytes { fingerprint.update($0) }
        }
        return fingerprint.finalize()
    }
}

extension RecordReference {
    /// A token that names a record rather than a query word: a number (`12`, `#12`), an id
    /// (`1bd89140:3`), or a hash prefix of at least 8 hex digits.
    static func named(_ token: String) -> RecordReference? {
        guard let reference = RecordReference(token) else { return nil }
        if case .id(let hash, nil) = reference, hash.count < 8 { return nil }
        return reference
    }
}

/// Asks `question` on the terminal and reads y/N; without a terminal on standard input, `yes`
/// must be given (a usage error, exit 2, otherwise).
/// The step `remove` and `forget` share before removing: a dry run says what it would do, a
/// person is asked (unless `--yes`); the library is closed when nothing is to be removed.
/// - Parameter dryRun: what a dry run would do, or nil when this is no dry run.
/// - Returns: true when the removal goes ahead.
func goesAhead(_ dryRun: String?, asking question: String, yes: Bool, store: any Library) async throws -> Bool {
    if let dryRun {
        try? await store.close()
        printError("dry run: \(dryRun); nothing removed.")
        return false
    }
    guard try confirm(question, yes: yes) else {
        try? await store.close()
        printError("nothing removed.")
        return false
    }
    return true
}

func confirm(_ question: String, yes: Bool) throws -> Bool {
    if yes { return true }
    guard isatty(0) != 0 else {
        throw ValidationError("Standard input is not a terminal to ask on: pass --yes to go ahead (or --dry-run to look).")
    }
    FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
    guard let answer = readLine() else { return false }
    return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
}
