import Foundation
import Synchronization

/// Runs the built `bookpipe` binary (it sits beside the test bundle) the way a person would.
enum CLI {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static var binary: URL {
        let testBinary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var folder = testBinary.deletingLastPathComponent()
        while folder.path != "/" {
            let candidate = folder.appendingPathComponent("bookpipe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return repositoryRoot.appendingPathComponent(".build/debug/bookpipe")
    }

    /// Bytes read on another thread.
    final class ReadBytes: Sendable {
        let data = Mutex(Data())
    }

    struct Result {
        /// The exit status, or the signal's number when a signal ended the process.
        var status: Int32
        var stdout: String
        var stderr: String
        /// True when a signal ended the process (`status` is then its number).
        var wasSignaled = false
    }

    static func start(_ arguments: [String], in directory: URL, executable: URL? = nil,
                      environment: [String: String]? = nil, input: String? = nil) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = executable ?? binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        let stdin = input.map { _ in Pipe() }
        if let stdin { process.standardInput = stdin }
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let stdin, let input {
            stdin.fileHandleForWriting.write(Data(input.utf8))
            try stdin.fileHandleForWriting.close()
        }
        return (process, out, err)
    }

    /// Runs the built binary (or `executable`) to its end and returns what it wrote.
    /// - Parameters:
    ///   - environment: The whole environment of the process (default: the test's own).
    ///   - input: Piped into its standard input, which is then closed (default: the test's own).
    static func run(_ arguments: [String], in directory: URL, executable: URL? = nil,
                    environment: [String: String]? = nil, input: String? = nil) throws -> Result {
        let (process, out, err) = try start(arguments, in: directory, executable: executable, environment: environment,
                                            input: input)
        // Both pipes are drained at once: a command that fills standard error's pipe (64 KiB) while
        // the test waits for standard output to end would otherwise wait forever. Standard error is
        // read on a thread of its own: on Dispatch's global queue, which runs as many blocks at once
        // as the machine has cores (2 here), the readers of tests running side by side queued behind
        // each other's slow commands, and quick tests ran into their hang guards on a busy machine.
        let stderrRead = DispatchSemaphore(value: 0)
        let stderrBytes = ReadBytes()
        let reader = Thread {
            let bytes = err.fileHandleForReading.readDataToEndOfFile()
            stderrBytes.data.withLock { $0 = bytes }
            stderrRead.signal()
        }
        reader.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        stderrRead.wait()
        let stderr = stderrBytes.data.withLock { $0 }
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self),
                      wasSignaled: process.terminationReason == .uncaughtSignal)
    }

    /// The JSON lines that are not exactly what Foundation's `JSONSerialization` writes for the
    /// same value with sorted keys and unescaped slashes (the export's JSON is written by hand and
    /// must stay byte for byte the same as before).
    static func nonCanonicalJSONLines(_ text: String) throws -> [String] {
        try text.split(separator: "\n").map(String.init).filter { line in
            let value = try JSONSerialization.jsonObject(with: Data(line.utf8))
            let canonical = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes])
            return String(decoding: canonical, as: UTF8.self) != line
        }
    }

    /// The objects of JSON Lines output (`review list --json`), one a line; a line that is not a
    /// JSON object is an error.
    static func jsonLines(_ text: String) throws -> [[String: Any]] {
        try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw CocoaError(.coderReadCorrupt, userInfo: [NSDebugDescriptionErrorKey: "not a JSON object: \(line)"])
            }
            return object
        }
    }

        static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes a Goodreads export of `rows` generated books.
    static func writeGoodreadsExport(rows: Int, to url: URL) throws {
        var text = "Book Id,Title,Author,Author l-f,Additional Authors,ISBN,ISBN13,My Rating,Average Rating,Publisher,Binding,Number of Pages,Year Published,Original Publication Year,Date Read,Date Added,Bookshelves,Bookshelves with positions,Exclusive Shelf,My Review,Spoiler,Private Notes,Read Count,Recommended For,Recommended By,Owned Copies,Original Purchase Date,Original Purchase Location,Condition,Condition Description,BCID\n"
        for row in 1...rows {
            text += "\(row),\"Book \(row), a \"\"tale\"\" (Series, #\(row % 9 + 1))\",Author \(row % 500),\"\(row % 500), Author\",,\"=\"\"\"\"\",\"=\"\"\"\"\",0,4.00,Pub,Paperback,300,2001,2001,,2020/01/01,,,read,\"line one\nline two\",,,1,,,0,,,,,\n"
        }
        try text.write(to: url, atomically: true, encoding: .utf8)
    }
}
