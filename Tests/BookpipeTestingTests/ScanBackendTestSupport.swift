import BookpipeImaging
import Foundation
import Testing
@testable import BookpipeTesting

/// The `curl` command line, for the requests `HTTPClient` does not make (multipart `POST`,
/// `DELETE`) and for streams that are cut (curl keeps what arrived).
enum Curl {
    struct Result: Sendable {
        /// curl's exit status (0, 18 for a cut transfer, 28 for a timeout, …).
        var exitStatus: Int32
        /// The final response's status, or 0 when none arrived.
        var status: Int
        /// The final response's header fields.
        var headers: [(name: String, value: String)]
        /// The body bytes that arrived.
        var body: [UInt8]
        /// The statuses of the informational (1xx) responses before the final one.
        var informationalStatuses: [Int] = []

        var text: String { String(decoding: body, as: UTF8.self) }

        func header(_ name: String) -> String? {
            headers.last { $0.name.lowercased() == name.lowercased() }?.value
        }

        func json() throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        }
    }

    /// Runs `curl -s -i ARGUMENTS` without blocking a thread of the cooperative pool.
    static func run(_ arguments: [String]) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "-s", "-i", "--no-progress-meter"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        // The pipe is read to its end on a thread of its own, never on the cooperative pool (two
        // blocked pool threads stall every other test of the process on a 2-core machine).
        let bytes: Data = try await withCheckedThrowingContinuation { continuation in
            do { try process.run() } catch { return continuation.resume(throwing: error) }
            Thread.detachNewThread {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: data)
            }
        }
        return parse(Array(bytes), exitStatus: process.terminationStatus)
    }

    /// `POST {base}/v3/jobs/scans` with the photo as the `image` part.
    static func upload(_ photo: URL, filename: String? = nil, to baseURL: String,
                       provider: String? = "gemini", extraArguments: [String] = []) async throws -> Result {
        var form = "image=@\(photo.path);type=image/jpeg"
        if let filename { form += ";filename=\(filename)" }
        var arguments = ["-H", "Accept: application/json", "-F", form]
        if let provider { arguments += ["-H", "X-AI-Provider: \(provider)"] }
        return try await run(arguments + extraArguments + ["\(baseURL)/v3/jobs/scans"])
    }

    /// Splits `-i` output into the last response's head and its body (skipping `100 Continue`).
    private static func parse(_ bytes: [UInt8], exitStatus: Int32) -> Result {
        var rest = bytes[...]
        var status = 0
        var headers: [(name: String, value: String)] = []
        var informational: [Int] = []
        while rest.starts(with: Array("HTTP/".utf8)), let end = rest.firstRange(of: [13, 10, 13, 10]) {
            let lines = String(decoding: rest[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
            headers = lines.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            rest = rest[end.upperBound...]
            if status >= 200 { break }
            informational.append(status)
        }
        return Result(exitStatus: exitStatus, status: status, headers: headers, body: Array(rest),
                      informationalStatuses: informational)
    }
}

/// A server-sent event as a client reads it (WHATWG rules: `data:` lines joined with `\n`,
/// comments skipped, CRLF or LF).
struct ReceivedEvent: Equatable {
    var name: String
    var id: String?
    var data: String

    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
    }

    /// Parses a whole stream; a last event without its blank line is dropped.
    static func parse(_ text: String) -> [ReceivedEvent] {
        var events: [ReceivedEvent] = []
        var name = "message", id: String?, data: [String] = []
        let lines = text.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false)
        for line in lines {
            if line.isEmpty {
                if !data.isEmpty { events.append(ReceivedEvent(name: name, id: id, data: data.joined(separator: "\n"))) }
                name = "message"; id = nil; data = []
                continue
            }
            if line.hasPrefix(":") { continue }
            let field = line.prefix { $0 != ":" }
            var value = line.dropFirst(field.count).dropFirst()
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch field {
            case "event": name = String(value)
            case "id": id = String(value)
            case "data": data.append(String(value))
            default: break
            }
        }
        return events
    }
}

/// Real JPEGs for the tests, written to a temporary folder.
struct TestPhotos {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("fake-scan-backend-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A `width` × `height` JPEG of vertical coloured bars; with `orientation`, an EXIF APP1
    /// segment carrying that tag follows SOI.
    func photo(_ name: String, width: Int = 320, height: Int = 240, orientation: Int? = nil) throws -> URL {
        var pixels = PixelBuffer(width: width, height: height, red: 240, green: 230, blue: 210)
        for x in 0..<width where (x / 16) % 2 == 0 {
            for y in 0..<height { pixels.setPixel(x: x, y: y, red: UInt8(x % 256), green: 40, blue: 90) }
        }
        var jpeg = try JPEGEncoder(quality: 80).encode(pixels, file: name)
        if let orientation { jpeg.insert(contentsOf: Self.exifSegment(orientation: orientation), at: 2) }
        let url = folder.appendingPathComponent(name)
        try Data(jpeg).write(to: url)
        return url
    }

    /// APP1 "Exif" with a big-endian TIFF header and one IFD entry: orientation (SHORT).
    static func exifSegment(orientation: Int) -> [UInt8] {
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8,   // MM, 42, IFD at 8
                             0, 1,                            // one entry
                             0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0,
                             0, 0, 0, 0]                      // no next IFD
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// Writes `text` to `name` in the folder.
    func file(_ name: String, _ text: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }
}
