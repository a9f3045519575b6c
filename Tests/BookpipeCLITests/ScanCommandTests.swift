import BookpipeImaging
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// `bookpipe scan` through the built binary, against the fake vision backend on loopback (real
/// HTTP through libcurl), with real JPEGs and a real library file.
@Suite(.serialized) struct ScanCommandTests {
    /// A temporary folder with photos and a library.
    struct Workspace {
        let folder: URL
        var photos: URL { folder.appendingPathComponent("photos") }
        var library: String { folder.appendingPathComponent("library.sqlite").path }

        init() throws {
            folder = try CLI.temporaryDirectory()
            try FileManager.default.createDirectory(at: photos, withIntermediateDirectories: true)
        }

        /// A `width` × `height` JPEG of stripes (an EXIF orientation tag after SOI when given).
        @discardableResult
        func photo(_ name: String, width: Int = 400, height: Int = 300, orientation: Int? = nil) throws -> String {
            // Each name gets its own colours, so no two photos have the same content.
            let seed = name.utf8.reduce(0) { ($0 &* 31 &+ Int($1)) & 0xFFFF }
            var pixels = PixelBuffer(width: width, height: height, red: UInt8(seed % 256), green: 230, blue: UInt8(seed / 256))
            for x in 0..<width where (x / 16) % 2 == 0 {
                for y in 0..<height { pixels.setPixel(x: x, y: y, red: UInt8(x % 256), green: UInt8(seed % 200), blue: 90) }
            }
            var jpeg = try JPEGEncoder(quality: 80).encode(pixels, file: name)
            if let orientation { jpeg.insert(contentsOf: Self.exifSegment(orientation: orientation), at: 2) }
            try Data(jpeg).write(to: photos.appendingPathComponent(name))
            return "photos/\(name)"
        }

        func file(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: photos.appendingPathComponent(name))
        }

        static func exifSegment(orientation: Int) -> [UInt8] {
            let tiff: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1,
                                 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0, 0, 0, 0, 0]
            let payload = Array("Exif".utf8) + [0, 0] + tiff
            return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }

        func scan(_ arguments: [String], backend: String) throws -> CLI.Result {
            try CLI.run(["scan"] + arguments + ["--backend", backend, "--library", library, "--no-enrich",
                                                "--progress", "none", "--upload-retry-delays", "0.05,0.1,0.2"],
                        in: folder)
        }

        /// The library's records as the export contract writes them.
        func records() throws -> [[String: Any]] {
            let result = try CLI.run(["export", "--format", "jsonl", "--library", library], in: folder)
            return try result.stdout.split(separator: "\n").map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
            }
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    static func source(_ record: [String: Any]) -> (file: String, index: Int) {
        let source = record["source"] as? [String: Any] ?? [:]
        return (source["file"] as? String ?? "", source["index"] as? Int ?? -1)
    }

    static func fake(_ options: FakeScanBackend.Options) throws -> (FakeScanBackend, String) {
        let backend = FakeScanBackend(options: options)
        return (backend, try backend.start())
    }

    @Test("A folder of photos: every detection stored once with its photo and index, unsure ones queued, jobs cleaned up; a rerun skips them",
          .timeLimit(.minutes(5)))
    func happyPath() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        try workspace.photo("b.jpg", orientation: 6)
        try workspace.photo("c.jpg")
        try workspace.file("notes.txt", Array("not a photo".utf8))  // not a .jpg: not picked from the folder
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(300), heartbeatInterval: .milliseconds(50),
                                                 multiLineData: true, lineEnding: .crlf))
        defer { backend.stop() }

        let result = try workspace.scan(["photos"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        let records = try workspace.records()
        #expect(records.count == 15)
        let sources = records.map(Self.source)
        #expect(Set(sources.map { "\($0.file)#\($0.index)" }).count == 15)
        #expect(Set(sources.map(\.file)) == ["photos/a.jpg", "photos/b.jpg", "photos/c.jpg"])
        #expect(Set(sources.map(\.index)) == [1, 2, 3, 4, 5])
        let station = records.filter { $0["title"] as? String == "STATION ELEVEN" }
        #expect(station.count == 3)
        #expect(station.allSatisfy { $0["reviewStatus"] as? String == "needsReview" && $0["confidence"] as? Double == 0.47 })
        #expect(records.filter { $0["reviewStatus"] as? String == "verified" }.count == 12)
        #expect(backend.uploads.map(\.provider) == ["gemini", "gemini", "gemini"])
        #expect(Set(backend.uploads.compactMap(\.filename)) == ["a.jpg", "b.jpg", "c.jpg"])
        #expect(backend.uploads.allSatisfy { !$0.hasOrientationTag })
        // b.jpg is stored 400×300 with orientation 6 (rotate 90°): uploaded upright, 300×400.
        let b = backend.uploads.first { $0.filename == "b.jpg" }
        #expect(b?.pixelWidth == 300 && b?.pixelHeight == 400)
        #expect(Set(backend.cleanups).count == 3)
        let managed = try FileManager.default.contentsOfDirectory(atPath: workspace.library + ".photos")
        #expect(managed.count == 3)
        #expect(result.stderr.contains("gemini: 3 photos, 15 books, 3 review items"), "\(result.stderr)")

        let again = try workspace.scan(["photos"], backend: url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("3 scanned by an earlier run (skipped)"), "\(again.stderr)")
        #expect(again.stderr.components(separatedBy: " books); skipped.").count == 4, "one line a photo")
        #expect(!again.stderr.contains("already imported"), "said once, as a photo skipped")
        #expect(backend.uploads.count == 3)
        #expect(try workspace.records().count == 15)
    }

    @Test("Each provider's preset sets the uploaded size: gemini 3072 px, cloudflare 1536 px on the long edge",
          .timeLimit(.minutes(5)))
    func presets() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("big.jpg", width: 4000, height: 3000)
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100)))
        defer { backend.stop() }
        #expect(try workspace.scan(["photos/big.jpg"], backend: url).status == 0)
        let other = try Workspace()
        defer { other.remove() }
        try other.photo("big.jpg", width: 4000, height: 3000)
        #expect(try other.scan(["photos/big.jpg", "--provider", "cloudflare"], backend: url).status == 0)
        let sizes = backend.uploads.map { "\($0.provider ?? "?") \($0.pixelWidth ?? 0)×\($0.pixelHeight ?? 0)" }
        #expect(sizes == ["gemini 3072×2304", "cloudflare 1536×1152"])
    }

    @Test("A 429 pauses new uploads until Retry-After has passed, one probe goes first, and every photo completes",
          .timeLimit(.minutes(5)))
    func rateLimited() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        for name in ["a.jpg", "b.jpg", "c.jpg", "d.jpg"] { try workspace.photo(name) }
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(400), maxConcurrentJobs: 1, busyRetryAfterSeconds: 1))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "--concurrency", "3"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try workspace.records().count == 20)
        #expect(backend.tooManyRequestsSent >= 1)
        #expect(backend.peakConcurrentJobs == 1)
        let uploads = backend.uploads
        for refused in uploads where refused.status == 429 {
            // Uploads sent after the client saw this 429 and before its Retry-After passed: none.
            let during = uploads.filter { $0.arrival > refused.arrival + .milliseconds(100)
                && $0.arrival < refused.arrival + .milliseconds(900) }
            #expect(during.isEmpty, "uploads during the pause: \(during.map(\.ordinal))")
        }
        #expect(result.stderr.contains("× 429"))
    }

    @Test("An upload answered 5xx is retried (at most 3 times); one that keeps failing fails its photo by name",
          .timeLimit(.minutes(5)))
    func serverErrors() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("flaky.jpg")
        try workspace.photo("down.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100), faultsByFilename: [
            "flaky.jpg": [.serverError(), .serverError(status: 502)],
            "down.jpg": [.serverError(), .serverError(), .serverError(), .serverError()],
        ]))
        defer { backend.stop() }
        let result = try workspace.scan(["photos"], backend: url)
        #expect(result.status == 1)
        #expect(backend.uploads.filter { $0.filename == "flaky.jpg" }.count == 3)
        #expect(backend.uploads.filter { $0.filename == "down.jpg" }.count == 4)
        #expect(Set(try workspace.records().map { Self.source($0).file }) == ["photos/flaky.jpg"])
        #expect(result.stderr.contains("photos/down.jpg: the upload failed 4 times (last: HTTP 503"), "\(result.stderr)")
    }

    @Test("A stream dropped mid-job is resumed with Last-Event-ID; indexes continue, nothing is duplicated",
          .timeLimit(.minutes(5)))
    func droppedStream() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(300), reconnectDelayHint: .milliseconds(50),
                                                 faultsByFilename: ["a.jpg": [.dropStream(afterResults: 2)]]))
        defer { backend.stop() }
        let result = try workspace.scan(["photos/a.jpg"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        let connections = backend.streamConnections
        #expect(connections.count == 2)
        #expect(connections.first?.lastEventID == nil)
        #expect(connections.last?.lastEventID != nil)
        let records = try workspace.records()
        #expect(records.map { Self.source($0).index }.sorted() == [1, 2, 3, 4, 5])
        #expect(records.map { $0["title"] as? String ?? "" }.sorted()
                == ["BELOVED", "DUNE", "PIRANESI", "STATION ELEVEN", "THE HOBBIT"])
    }

    @Test("A job that fails after some results is sent again with the fallback provider; its detections replace the partial ones",
          .timeLimit(.minutes(5)))
    func fallbackReplacesPartialDetections() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg", width: 2000, height: 1500)
        try workspace.photo("b.jpg")
        let faults: [String: [FakeScanBackend.Fault]] = [
            "a.jpg": [.jobError(code: "E_MODEL", message: "model overloaded", afterResults: 3)],
            "b.jpg": [.jobError(code: "E_MODEL", message: "model overloaded", afterResults: 2),
                      .jobError(code: "E_MODEL", message: "still overloaded", afterResults: 1)],
        ]
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(300), faultsByFilename: faults))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "--fallback-provider", "cloudflare"], backend: url)
        #expect(result.status == 1)
        let a = backend.uploads.filter { $0.filename == "a.jpg" }
        #expect(a.map(\.provider) == ["gemini", "cloudflare"])
        #expect(a.map { $0.pixelWidth ?? 0 } == [2000, 1536])
        let records = try workspace.records()
        #expect(records.map { Self.source($0) }.filter { $0.file == "photos/a.jpg" }.map(\.index).sorted() == [1, 2, 3, 4, 5])
        #expect(records.filter { Self.source($0).file == "photos/b.jpg" }.isEmpty)
        #expect(result.stderr.contains("photos/b.jpg: the job failed on the backend (E_MODEL: still overloaded) (cloudflare)"),
                "\(result.stderr)")
        #expect(result.stderr.contains("cloudflare: 1 photo, 5 books"), "\(result.stderr)")
    }

    @Test("Bad photos are reported by name and never uploaded; the good one is scanned", .timeLimit(.minutes(5)))
    func badPhotos() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("good.jpg")
        try workspace.file("empty.jpg", [])
        try workspace.file("text.jpg", Array("hello, not a JPEG".utf8))
        let jpeg = try Data(contentsOf: workspace.photos.appendingPathComponent("good.jpg"))
        try workspace.file("truncated.jpg", Array(jpeg.prefix(jpeg.count / 2)))
        var bomb = Array(jpeg)
        if let sof = (0..<bomb.count - 9).first(where: { bomb[$0] == 0xFF && bomb[$0 + 1] == 0xC0 }) {
            bomb.replaceSubrange(sof + 5..<sof + 9, with: [0xEA, 0x60, 0xEA, 0x60])  // 60000 × 60000
        }
        try workspace.file("bomb.jpg", bomb)
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100)))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "missing-folder"], backend: url)
        #expect(result.status == 1)
        #expect(backend.uploads.map(\.filename) == ["good.jpg"])
        for name in ["empty.jpg", "text.jpg", "truncated.jpg", "bomb.jpg"] {
            #expect(result.stderr.contains("error: photos/\(name): "), "\(name): \(result.stderr)")
        }
        #expect(result.stderr.contains("missing-folder: no such photo or folder"))
        // scan has no option for the pixel limit, so its message names none.
        #expect(result.stderr.contains("error: photos/bomb.jpg: the image is too large (the header claims 60000x60000 = "
                                       + "3600000000 pixels; the limit is 100000000). Nothing was decoded; if it is a real "
                                       + "photo, shrink it below the limit first."), "\(result.stderr)")
        #expect(!result.stderr.contains("pixel limit") && !result.stderr.contains("--max-pixels"), "\(result.stderr)")
        #expect(Set(try workspace.records().map { Self.source($0).file }) == ["photos/good.jpg"])
    }

    @Test("The summary accounts for every photo: scanned, could not be prepared (listed with reasons, apart from the provider's failures), and the named input that could not be read",
          .timeLimit(.minutes(5)))
    func summaryCountsPhotosThatCouldNotBePrepared() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("good.jpg")
        try workspace.photo("other.jpg")
        try workspace.file("empty.jpg", [])
        try workspace.file("text.jpg", Array("hello, not a JPEG".utf8))
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100), faultsByFilename: [
            "other.jpg": [.jobError(code: "E_MODEL", message: "model overloaded", afterResults: 0)],
        ]))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "missing-folder"], backend: url)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let summary = Array(lines.drop { !$0.hasPrefix("scan: ") })
        let gemini = summary.first { $0.hasPrefix("  gemini: ") } ?? ""
        #expect(summary.first == "scan: 4 photos, 1 scanned, 1 failed, 2 could not be prepared", "\(result.stderr)")
        #expect(gemini.hasPrefix("  gemini: 1 photo, 5 books, ") && gemini.hasSuffix(", 0 × 429, 1 failure"), "\(result.stderr)")
        let lists = Array(summary.drop { !$0.hasPrefix("  1 photo failed") }.prefix(7))
        #expect(lists.count == 7, "\(result.stderr)")
        let expected = [
            "  1 photo failed (no detection kept); run the same command again to retry them:",
            "    photos/other.jpg: the job failed on the backend (E_MODEL: model overloaded) (gemini)",
            "  2 photos could not be prepared (never sent); replace or remove them, then run the same command again:",
            "    photos/empty.jpg: the file is empty (0 bytes).",
            "    photos/text.jpg: not a JPEG file",
            "  1 photo or folder could not be read:",
            "    missing-folder: no such photo or folder",
        ]
        for (line, start) in zip(lists, expected) { #expect(line.hasPrefix(start), "\(start)\n\(result.stderr)") }
    }

    @Test("A folder inside a named folder is not searched, and the run says so once, in the progress and in the summary; naming it scans it",
          .timeLimit(.minutes(5)))
    func subfoldersAreNamedNotSearched() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        try FileManager.default.createDirectory(at: workspace.photos.appendingPathComponent("locked"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: workspace.photos.appendingPathComponent(".cache"), withIntermediateDirectories: true)
        try workspace.photo("locked/shelf3.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100)))
        defer { backend.stop() }
        let result = try workspace.scan(["photos"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        let note = "photos/locked: a folder inside photos, not searched (name it to scan it)"
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == note }.count == 1, "said once as the run starts: \(result.stderr)")
        #expect(lines.contains("scan: 1 photo"), "\(result.stderr)")
        #expect(Array(lines.drop { $0 != "  1 folder not searched:" }.prefix(2)) == ["  1 folder not searched:", "    " + note],
                "\(result.stderr)")
        #expect(!result.stderr.contains(".cache"), "hidden folders are not mentioned")
        #expect(backend.uploads.compactMap(\.filename) == ["a.jpg"])

        let help = try CLI.run(["scan", "--help"], in: workspace.folder)
        #expect(help.stdout.replacingOccurrences(of: "\n", with: " ").contains("folders inside it are not searched"), "\(help.stdout)")

        let named = try workspace.scan(["photos", "photos/locked"], backend: url)
        #expect(named.status == 0, "\(named.stderr)")
        #expect(named.stderr.contains("scan: 2 photos, 1 scanned, 1 scanned by an earlier run (skipped)"), "\(named.stderr)")
        #expect(backend.uploads.compactMap(\.filename) == ["a.jpg", "shelf3.jpg"])
    }

    @Test("Copies of photos count as 'same content as another photo', each naming the photo it copies, apart from those an earlier run scanned",
          .timeLimit(.minutes(5)))
    func sameContentCountedApart() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        try workspace.photo("b.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100)))
        defer { backend.stop() }
        #expect(try workspace.scan(["photos"], backend: url).status == 0)
        for original in ["a", "b"] {
            for copy in 1...4 {
                try FileManager.default.copyItem(at: workspace.photos.appendingPathComponent("\(original).jpg"),
                                                 to: workspace.photos.appendingPathComponent("\(original)\(copy).jpg"))
            }
        }
        let again = try workspace.scan(["photos"], backend: url)
        #expect(again.status == 0, "\(again.stderr)")
        let lines = again.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("scan: 10 photos, 2 scanned by an earlier run (skipped), 8 same content as another photo (skipped)"),
                "\(again.stderr)")
        for original in ["a", "b"] {
            #expect(lines.contains("photos/\(original).jpg: scanned by an earlier run (5 books); skipped."), "\(again.stderr)")
            for copy in 1...4 {
                #expect(lines.contains("photos/\(original)\(copy).jpg: same content as photos/\(original).jpg; skipped."),
                        "\(again.stderr)")
            }
        }
        #expect(backend.uploads.count == 2)

        // In one run: each content scanned once, as its first name.
        let fresh = try Workspace()
        defer { fresh.remove() }
        try FileManager.default.removeItem(at: fresh.photos)
        try FileManager.default.copyItem(at: workspace.photos, to: fresh.photos)
        let first = try fresh.scan(["photos"], backend: url)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("scan: 10 photos, 2 scanned, 8 same content as another photo (skipped)\n"), "\(first.stderr)")
        #expect(first.stderr.contains("  gemini: 2 photos, 10 books, "), "\(first.stderr)")
        #expect(backend.uploads.count == 4)
    }

    @Test("Bad backend answers fail their photo with a clear reason and store nothing made up; the run goes on",
          .timeLimit(.minutes(5)))
    func badBackendAnswers() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let faults: [String: FakeScanBackend.Fault] = [
            "b1.jpg": .nonJSONAccepted, "b2.jpg": .acceptedWithoutJobID, "b3.jpg": .invalidJSONEvent,
            "b4.jpg": .confidenceOutOfRange, "b5.jpg": .silentStream, "b6.jpg": .payloadTooLarge,
            "b7.jpg": .badRequest(message: "cannot read the image"),
        ]
        for name in faults.keys { try workspace.photo(name) }
        try workspace.photo("good.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(200), faultsByFilename: faults.mapValues { [$0] }))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "--stream-timeout", "1", "--concurrency", "8"], backend: url)
        #expect(result.status == 1)
        // A confidence of 1.7 is not a reason to drop a photo's detections: as in a scan file, the
        // detection is kept with no confidence and goes to review (one rule for a detection).
        let records = try workspace.records()
        #expect(Set(records.map { Self.source($0).file }) == ["photos/good.jpg", "photos/b4.jpg"])
        let odd = records.filter { Self.source($0).file == "photos/b4.jpg" && $0["title"] as? String == "DUNE" }
        #expect(odd.count == 1 && odd.first?["confidence"] == nil && odd.first?["reviewStatus"] as? String == "needsReview",
                "\(odd)")
        let expected = [
            "photos/b1.jpg: the backend's answer to the upload cannot be used: HTTP 202 with a body that is not a JSON object",
            "photos/b2.jpg: the backend's answer to the upload cannot be used: HTTP 202 without a jobId",
            "photos/b3.jpg: the job's stream sent an unusable event: the result event (id 1) is not a JSON object",
            "photos/b5.jpg: the job's stream sent nothing for 1.0 seconds",
            "photos/b6.jpg: the backend refused the upload (HTTP 413",
            "photos/b7.jpg: the backend refused the upload (HTTP 400: cannot read the image)",
        ]
        for line in expected { #expect(result.stderr.contains(line), "\(line)\n\(result.stderr)") }
        #expect(result.stderr.contains("6 photos failed (no detection kept)"), "\(result.stderr)")
    }

    /// Starts scanning eight photos (two 1.2 s jobs at a time) and stops the process with `signal`
    /// once three jobs completed, mid-way through the next ones (some of their results stored).
    static func scanStopped(by signal: Int32, in workspace: Workspace) throws
        -> (backend: FakeScanBackend, url: String, names: [String], status: Int32, stderr: String, uploadedBefore: Int) {
        let names = (1...8).map { "shelf\($0).jpg" }
        for name in names { try workspace.photo(name) }
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(1200)))
        let (process, _, err) = try CLI.start(["scan", "photos", "--backend", url, "--library", workspace.library, "--no-enrich",
                                               "--progress", "none", "--concurrency", "2"], in: workspace.folder)
        let deadline = Date().addingTimeInterval(20)
        while backend.jobsCompleted < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.6)  // mid-way through the next jobs: some results are stored
        kill(process.processIdentifier, signal)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (backend, url, names, process.terminationStatus, stderr, backend.uploads.count)
    }

    @Test("Killed with SIGKILL mid-scan, the same command skips completed photos and resends cut ones without duplicates",
          .timeLimit(.minutes(5)))
    func resumeAfterKill() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let stopped = try Self.scanStopped(by: SIGKILL, in: workspace)
        defer { stopped.backend.stop() }
        let (backend, url, uploadsBefore) = (stopped.backend, stopped.url, stopped.uploadedBefore)
        #expect(uploadsBefore < 8, "the kill landed before the end")

        let result = try workspace.scan(["photos", "--concurrency", "4"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        let records = try workspace.records()
        #expect(records.count == 40)
        #expect(Set(records.map { "\(Self.source($0).file)#\(Self.source($0).index)" }).count == 40)
        let resent = backend.uploads.dropFirst(uploadsBefore).compactMap(\.filename)
        #expect(resent.count < 8, "completed photos are skipped: \(resent)")
        #expect(result.stderr.contains("scanned by an earlier run (skipped)"))
    }

    @Test("Against a port that refuses connections the run stops after the first round: exit 1, one 'stopped:' line, unsent photos unrecorded; the same command against a backend that answers then scans every photo once",
          .timeLimit(.minutes(5)))
    func unreachableBackend() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(100)))
        defer { backend.stop() }
        // An earlier run scanned one photo, so the library exists and remembers it.
        try workspace.photo("first.jpg")
        #expect(try workspace.scan(["photos/first.jpg"], backend: url).status == 0)
        let names = (1...10).map { String(format: "shelf%02d.jpg", $0) }
        for name in names { try workspace.photo(name) }
        let closed = try ClosedPort()   // bound, never listening: every connection is refused
        defer { closed.close() }
        let refused = closed.baseURL

        let stopped = try workspace.scan(["photos"], backend: refused)   // 4 jobs at a time: 4 in a row stop it
        #expect(stopped.status == 1, "\(stopped.stderr)")
        let lines = stopped.stderr.split(separator: "\n").map(String.init)
        let pattern = #/stopped: the backend at (.+) could not be reached \(connection refused\) for 4 photos in a row; (\d+) photos not sent\. Run the same command when it is reachable again\./#
        let match = try #require(lines.last?.wholeMatch(of: pattern), "\(stopped.stderr)")
        #expect(String(match.1) == refused)
        let unsent = Int(match.2) ?? -1
        let jobs = try LibraryStore(path: workspace.library).scanJobs()
        let failed = jobs.filter { $0.phase == .failed }.map { URL(fileURLWithPath: $0.photo).lastPathComponent }
        // The first round (4) failed; a job that ended first may have started one more each meanwhile.
        #expect((4...7).contains(failed.count), "\(failed)")
        #expect(failed.count + unsent == names.count, "\(stopped.stderr)")
        #expect(jobs.count == 1 + failed.count, "unsent photos have no scan_jobs row")
        #expect(stopped.stderr.contains("\(failed.count) photos failed (no detection kept)"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("1 scanned by an earlier run (skipped)"), "\(stopped.stderr)")
        #expect(lines.contains("scan: 11 photos, 1 scanned by an earlier run (skipped), \(failed.count) failed, \(unsent) not sent"),
                "every photo named is counted once: \(stopped.stderr)")
        for name in names where !failed.contains(name) {
            #expect(!stopped.stderr.contains("photos/\(name)"), "\(name) was not sent, so nothing is said of it")
        }
        #expect(backend.uploads.count == 1)

        let resumed = try workspace.scan(["photos"], backend: url)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(backend.uploads.compactMap(\.filename).sorted() == ["first.jpg"] + names, "each photo exactly once")
        #expect(try workspace.records().count == 5 * (1 + names.count))
        #expect(try LibraryStore(path: workspace.library).scanJobs().allSatisfy { $0.phase == .complete })
        #expect(!resumed.stderr.contains("stopped:"))
    }

    @Test("--progress json against a backend that cannot be reached ends: each photo's last stage is failed or unsent, never both",
          .timeLimit(.minutes(5)))
    func unreachableBackendProgressJSON() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let names = (1...6).map { "shelf\($0).jpg" }
        for name in names { try workspace.photo(name) }
        let closed = try ClosedPort()   // bound, never listening: every connection is refused
        defer { closed.close() }
        let refused = "http://127.0.0.1:\(closed.port)"
        let result = try CLI.run(["scan", "photos", "--backend", refused, "--library", workspace.library, "--no-enrich",
                                  "--progress", "json", "--concurrency", "2", "--upload-retry-delays", "0.05,0.1,0.2"],
                                 in: workspace.folder)
        #expect(result.status == 1, "\(result.stderr)")
        let objects = try result.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        var lastStage: [String: String] = [:]
        var stages: [String: Set<String>] = [:]
        for object in objects {
            guard let photo = object["photo"] as? String, let stage = object["stage"] as? String else { continue }
            lastStage[photo] = stage
            stages[photo, default: []].insert(stage)
        }
        #expect(Set(lastStage.keys) == Set(names.map { "photos/\($0)" }), "\(result.stderr)")
        let unsent = lastStage.filter { $0.value == "unsent" }.keys
        #expect(lastStage.values.allSatisfy { $0 == "failed" || $0 == "unsent" }, "\(lastStage)")
        #expect(unsent.allSatisfy { stages[$0]?.contains("uploading") == false }, "\(stages)")
        #expect((2...3).contains(names.count - unsent.count), "\(lastStage)")
        #expect(result.stderr.contains("for 2 photos in a row; \(unsent.count) photos not sent."), "\(result.stderr)")
    }

    @Test("Usage errors exit 2 and say what to give: no backend, a backend that is not http(s), --concurrency 0")
    func usageErrors() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        let notHTTP = try CLI.run(["scan", "photos", "--backend", "ftp://example.org", "--library", workspace.library],
                                  in: workspace.folder)
        #expect(notHTTP.status == 2)
        #expect(notHTTP.stderr.contains("--backend takes an http:// or https:// URL, not 'ftp://example.org'."))
        let noJobs = try CLI.run(["scan", "photos", "--backend", "http://127.0.0.1:9", "--concurrency", "0",
                                  "--library", workspace.library], in: workspace.folder)
        #expect(noJobs.status == 2)
        #expect(noJobs.stderr.contains("--concurrency takes a number of jobs, 1 or more."))
        if ProcessInfo.processInfo.environment["BOOKPIPE_SCAN_URL"] == nil {
            let none = try CLI.run(["scan", "photos", "--library", workspace.library], in: workspace.folder)
            #expect(none.status == 2)
            #expect(none.stderr.contains("No vision backend: give --backend URL, set BOOKPIPE_SCAN_URL or scan-backend in bookpipe.yaml"))
        }
        #expect(!FileManager.default.fileExists(atPath: workspace.library), "nothing was opened")
    }

    @Test("--progress json writes one line per stage event of each photo: {\"photo\", \"stage\", \"progress\"}",
          .timeLimit(.minutes(5)))
    func progressJSON() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        try workspace.photo("a.jpg")
        try workspace.photo("b.jpg")
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(300)))
        defer { backend.stop() }
        let result = try CLI.run(["scan", "photos", "--backend", url, "--library", workspace.library, "--no-enrich",
                                  "--progress", "json"], in: workspace.folder)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }
        let objects = try lines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        #expect(!objects.isEmpty)
        #expect(objects.allSatisfy { Set($0.keys) == ["photo", "stage", "progress"] }, "\(lines)")
        #expect(objects.allSatisfy { $0["progress"] is NSNull || ($0["progress"] as? Double).map { (0...1).contains($0) } == true })
        for photo in ["photos/a.jpg", "photos/b.jpg"] {
            let stages = objects.filter { $0["photo"] as? String == photo }.compactMap { $0["stage"] as? String }
            // In order: prepared, uploaded, the backend's stages as its events came, then done.
            #expect(stages.first == "preparing", "\(photo): \(stages)")
            #expect(stages.last == "complete", "\(photo): \(stages)")
            let firstOfEach = ["preparing", "uploading", "looking", "reading", "enriching", "complete"]
                .map { stages.firstIndex(of: $0) ?? -1 }
            #expect(firstOfEach.allSatisfy { $0 >= 0 } && firstOfEach == firstOfEach.sorted(), "\(photo): \(stages)")
            let last = objects.last { $0["photo"] as? String == photo }
            #expect(last?["progress"] as? Double == 1)
        }
        // Every progress event the backend sent for a photo is passed on (the fake sends 3 looking, 3 enriching).
        let looking = objects.filter { $0["photo"] as? String == "photos/a.jpg" && $0["stage"] as? String == "looking" }
        #expect(looking.compactMap { $0["progress"] as? Double } == [0, 0.5, 1])
    }

    @Test("The summary gives per provider: photos, books, review items, mean job time, 429s and failures",
          .timeLimit(.minutes(5)))
    func summaryPerProvider() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        for name in ["a.jpg", "b.jpg", "c.jpg", "d.jpg"] { try workspace.photo(name) }
        let (backend, url) = try Self.fake(.init(jobDuration: .milliseconds(300), faultsByFilename: [
            "a.jpg": [.tooManyRequests(retryAfter: .seconds(0))],
            "b.jpg": [.jobError(code: "E_MODEL", message: "model overloaded", afterResults: 2)],
            "d.jpg": [.jobError(code: "E_MODEL", message: "model overloaded", afterResults: 0),
                      .jobError(code: "E_MODEL", message: "still overloaded", afterResults: 0)],
        ]))
        defer { backend.stop() }
        let result = try workspace.scan(["photos", "--fallback-provider", "cloudflare"], backend: url)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        // a (after one 429) and c complete with gemini; b fails with gemini and completes with
        // cloudflare; d fails with both. Each photo: 5 books, one below 0.60.
        let pattern = #/  (\w+): (\d+) photos?, (\d+) books?, (\d+) review items?, mean job time ([0-9.]+) s, (\d+) × 429, (\d+) failures?/#
        var figures: [String: [Double]] = [:]
        for line in lines {
            guard let match = line.wholeMatch(of: pattern) else { continue }
            figures[String(match.1)] = [match.2, match.3, match.4, match.6, match.7].map { Double($0)! } + [Double(match.5)!]
        }
        #expect(figures["gemini"]?.prefix(5) == [2, 10, 2, 1, 2], "\(result.stderr)")
        #expect(figures["cloudflare"]?.prefix(5) == [1, 5, 1, 0, 1], "\(result.stderr)")
        // A job lasts at least the fake's 0.3 s from upload to complete (printed to 0.1 s).
        #expect((figures["gemini"]?.last ?? 0) >= 0.3, "\(result.stderr)")
        #expect((figures["cloudflare"]?.last ?? 0) >= 0.3, "\(result.stderr)")
        #expect(lines.contains("scan: 4 photos, 3 scanned, 1 failed"), "\(result.stderr)")
        #expect(lines.contains { $0.hasPrefix("  cloudflare: 1 photo, 5 books, 1 review item, mean job time ")
                                 && $0.hasSuffix(" s, 0 × 429, 1 failure") }, "\(result.stderr)")
        #expect(lines.contains("  1 photo failed (no detection kept); run the same command again to retry them:"), "\(result.stderr)")
        #expect(lines.contains("    photos/d.jpg: the job failed on the backend (E_MODEL: still overloaded) (cloudflare)"),
                "\(result.stderr)")
    }

    @Test("Ctrl-C mid-scan stops with exit 130; the same command skips completed photos, resends the cut ones, duplicates nothing",
          .timeLimit(.minutes(5)))
    func resumeAfterInterrupt() throws {
        let workspace = try Workspace()
        defer { workspace.remove() }
        let stopped = try Self.scanStopped(by: SIGINT, in: workspace)
        defer { stopped.backend.stop() }
        let (backend, url, names, uploadedBefore) = (stopped.backend, stopped.url, stopped.names, stopped.uploadedBefore)
        #expect(stopped.status == 130, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("run the same command again to resume where it stopped"), "\(stopped.stderr)")
        #expect(uploadedBefore < 8, "the interrupt landed before the end")
        let jobs = try LibraryStore(path: workspace.library).scanJobs()
        let completed = Set(jobs.filter { $0.phase == .complete }.map { URL(fileURLWithPath: $0.photo).lastPathComponent })
        let cut = Set(jobs.filter { $0.phase == .running }.map { URL(fileURLWithPath: $0.photo).lastPathComponent })
        #expect(completed.count >= 3)
        #expect(!cut.isEmpty, "jobs in flight at the interrupt are left running")
        #expect(try workspace.records().count >= completed.count * 5)

        let result = try workspace.scan(["photos", "--concurrency", "4"], backend: url)
        #expect(result.status == 0, "\(result.stderr)")
        let resent = Set(backend.uploads.dropFirst(uploadedBefore).compactMap(\.filename))
        #expect(resent == Set(names).subtracting(completed))
        #expect(cut.isSubset(of: resent))
        let records = try workspace.records()
        #expect(records.count == 40)
        #expect(Set(records.map { "\(Self.source($0).file)#\(Self.source($0).index)" }).count == 40)
        #expect(result.stderr.contains("\(completed.count) scanned by an earlier run (skipped)"), "\(result.stderr)")
    }
}
