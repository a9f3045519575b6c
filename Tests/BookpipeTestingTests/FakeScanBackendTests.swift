import BookpipeCore
import BookpipeHTTP
import Foundation
import Testing
@testable import BookpipeTesting

/// The fake vision backend over real loopback HTTP: the project's libcurl client for streams,
/// the `curl` command line for multipart uploads, cut streams and `DELETE`.
@Suite("The fake scan backend speaks issue 15's protocol and records what it received",
       .timeLimit(.minutes(5)))
struct FakeScanBackendTests {
    static let shelf = [
        FakeScanBackend.Detection(title: "DUNE", author: "FRANK HERBERT", confidence: 0.93,
                      boundingBox: .init(x: 0.1, y: 0.1, width: 0.05, height: 0.8)),
        FakeScanBackend.Detection(title: "IT", author: nil, isbn: "9781501142970", confidence: 0.42),
        FakeScanBackend.Detection(title: "BELOVED", author: "TONI MORRISON"),
    ]

    /// Starts a backend and a client, runs `body`, then shuts everything down.
    func withBackend<T>(_ options: FakeScanBackend.Options,
                        _ body: (FakeScanBackend, String, HTTPClient, TestPhotos) async throws -> T) async throws -> T {
        let backend = FakeScanBackend(options: options)
        let baseURL = try backend.start()
        let client = try HTTPClient()
        let photos = try TestPhotos()
        defer {
            client.close()
            backend.stop()
            photos.remove()
        }
        return try await body(backend, baseURL, client, photos)
    }

    /// Waits (up to 30 s, polling) until `condition` holds; a test fails rather than hangs.
    func eventually(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition never held within 30 s", sourceLocation: sourceLocation)
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    func stream(_ url: String, client: HTTPClient, lastEventID: String? = nil) async throws -> [ReceivedEvent] {
        var headers = [(name: "Accept", value: "text/event-stream")]
        if let lastEventID { headers.append(("Last-Event-ID", lastEventID)) }
        let response = try await client.get(url, headers: headers)
        #expect(response.status == 200)
        #expect(response.headers.contentType == "text/event-stream")
        return ReceivedEvent.parse(response.bodyText)
    }

    @Test("An upload becomes a job whose stream brings progress, every result with its id, then complete; cleanup is recorded")
    func happyPath() async throws {
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(400), detectionsByFilename: ["shelf1.jpg": Self.shelf])
        try await withBackend(options) { backend, baseURL, client, photos in
            let photo = try photos.photo("shelf1.jpg", width: 640, height: 480)
            let started = ContinuousClock.now
            let accepted = try await Curl.upload(photo, to: baseURL, provider: "cloudflare")
            #expect(accepted.status == 202)
            let answer = try accepted.json()
            let jobID = try #require(answer["jobId"] as? String)
            let streamURL = try #require(answer["streamUrl"] as? String)
            #expect(streamURL == "\(baseURL)/v3/jobs/scans/\(jobID)/events")

            let events = try await stream(streamURL, client: client)
            #expect(started.duration(to: .now) >= .milliseconds(400))
            let results = events.filter { $0.name == "result" }
            #expect(results.map(\.id) == ["1", "2", "3"])
            let decoded = try results.map { try JSONDecoder().decode(FakeScanBackend.Detection.self, from: Data($0.data.utf8)) }
            #expect(decoded == Self.shelf)
            #expect(try results[1].json()["author"] is NSNull)
            #expect(try results[2].json()["confidence"] == nil)
            let stages = try events.filter { $0.name == "progress" }.map { try $0.json()["stage"] as? String }
            #expect(stages.first == "looking" && stages.last == "enriching" && stages.contains("reading"))
            #expect(try events.filter { $0.name == "progress" }.allSatisfy {
                let value = try #require($0.json()["progress"] as? Double)
                return (0...1).contains(value)
            })
            #expect(events.last?.name == "complete")
            let complete = try #require(events.last).json()
            #expect(complete["jobId"] as? String == jobID)
            #expect(complete["books"] as? Int == 3)

            let cleanup = try await Curl.run(["-X", "DELETE", "\(baseURL)/v3/jobs/scans/\(jobID)/cleanup"])
            #expect(cleanup.status == 204)
            let again = try await client.get(streamURL, headers: [("Accept", "text/event-stream")])
            #expect(again.status == 404)

            let upload = try #require(backend.uploads.first)
            #expect(upload.provider == "cloudflare")
            #expect(upload.filename == "shelf1.jpg")
            #expect(upload.pixelWidth == 640 && upload.pixelHeight == 480)
            #expect(upload.byteCount == (try Data(contentsOf: photo).count))
            #expect(upload.hasOrientationTag == false)
            #expect(upload.status == 202 && upload.jobID == jobID && upload.fault == nil)
            #expect(backend.streamConnections.map(\.jobID) == [jobID, jobID])
            #expect(backend.streamConnections.first?.lastEventID == nil)
            #expect(backend.cleanups == [jobID])
            #expect(backend.peakConcurrentJobs == 1)
            #expect(backend.jobsCompleted == 1)
        }
    }

    @Test("Detections come from the dictionary, then the sidecar <stem>.json, then the default set")
    func detectionSources() async throws {
        try await withBackend(.init(jobDuration: .milliseconds(100))) { backend, baseURL, client, photos in
            let sidecars = photos.folder.appendingPathComponent("sidecars", isDirectory: true)
            try FileManager.default.createDirectory(at: sidecars, withIntermediateDirectories: true)
            try Data(#"[{"title": "EMMA", "author": "JANE AUSTEN", "isbn": null, "confidence": 0.55}]"#.utf8)
                .write(to: sidecars.appendingPathComponent("shelf2.json"))
            let withSidecars = FakeScanBackend(options: .init(detectionsByFilename: ["shelf1.jpg": Self.shelf],
                                                              sidecarDirectory: sidecars))
            #expect(withSidecars.detections(forFilename: "shelf1.jpg") == Self.shelf)
            #expect(withSidecars.detections(forFilename: "shelf2.jpg")
                    == [FakeScanBackend.Detection(title: "EMMA", author: "JANE AUSTEN", confidence: 0.55)])
            #expect(withSidecars.detections(forFilename: "shelf3.jpg") == FakeScanBackend.Detection.defaultSet)

            // Over the wire, a photo nothing names gets the default set.
            let accepted = try await Curl.upload(try photos.photo("other.jpg"), to: baseURL)
            let events = try await stream(try #require(accepted.json()["streamUrl"] as? String), client: client)
            #expect(events.filter { $0.name == "result" }.count == FakeScanBackend.Detection.defaultSet.count)
        }
    }

    @Test("A stream cut after 2 results resumes after Last-Event-ID: 2 with results 3… and complete")
    func droppedStreamResumes() async throws {
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(300), detectionsByFilename: ["a.jpg": Self.shelf],
                                              faultsByFilename: ["a.jpg": [.dropStream(afterResults: 2)]])
        try await withBackend(options) { backend, baseURL, client, photos in
            let accepted = try await Curl.upload(try photos.photo("a.jpg"), to: baseURL)
            let streamURL = try #require(accepted.json()["streamUrl"] as? String)

            let cut = try await Curl.run(["-N", "-H", "Accept: text/event-stream", streamURL])
            #expect(cut.exitStatus == 18)   // CURLE_PARTIAL_FILE: the chunked body never ended
            let first = ReceivedEvent.parse(cut.text)
            #expect(first.filter { $0.name == "result" }.map(\.id) == ["1", "2"])
            #expect(!first.contains { $0.name == "complete" })

            let resumed = try await stream(streamURL, client: client, lastEventID: "2")
            #expect(resumed.filter { $0.name == "result" }.map(\.id) == ["3"])
            #expect(try resumed.last?.json()["books"] as? Int == 3)
            #expect(backend.streamConnections.map(\.lastEventID) == [nil, "2"])
        }
    }

    @Test("Beyond maxConcurrentJobs an upload gets 429 with Retry-After; the peak is recorded")
    func concurrencyLimit() async throws {
        // Held jobs run until released, so the limit is met however slowly the uploads arrive.
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(100), maxConcurrentJobs: 2, busyRetryAfterSeconds: 2,
                                              holdsJobsUntilReleased: true)
        try await withBackend(options) { backend, baseURL, _, photos in
            let photo = try photos.photo("p.jpg")
            #expect(try await Curl.upload(photo, to: baseURL).status == 202)
            #expect(try await Curl.upload(photo, to: baseURL).status == 202)
            let refused = try await Curl.upload(photo, to: baseURL)
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "2")
            #expect(backend.jobsCompleted == 0)
            backend.releaseJobs()
            try await eventually { backend.jobsCompleted == 2 }
            #expect(try await Curl.upload(photo, to: baseURL).status == 202)
            #expect(backend.tooManyRequestsSent == 1)
            #expect(backend.peakConcurrentJobs == 2)
            #expect(backend.uploads.map(\.status) == [202, 202, 429, 202])
            #expect(backend.jobsCreated == 3)
        }
    }

    @Test("Four jobs run and stream at once, each to its complete")
    func fourStreamsAtOnce() async throws {
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(300), holdsJobsUntilReleased: true)
        try await withBackend(options) { backend, baseURL, _, photos in
            let photo = try photos.photo("p.jpg")
            var streamURLs: [String] = []
            for _ in 0..<4 {
                streamURLs.append(try #require(try await Curl.upload(photo, to: baseURL).json()["streamUrl"] as? String))
            }
            let completes = try await withThrowingTaskGroup(of: Int.self) { group in
                // One curl each: the HTTPClient keeps one connection per host.
                for url in streamURLs {
                    group.addTask {
                        let response = try await Curl.run(["-N", "-H", "Accept: text/event-stream", url])
                        return ReceivedEvent.parse(response.text).filter { $0.name == "complete" }.count
                    }
                }
                // Every stream is open (and its job held) before any job's clock starts.
                try await eventually { backend.streamConnections.count == 4 }
                backend.releaseJobs()
                return try await group.reduce(0, +)
            }
            #expect(completes == 4)
            #expect(backend.peakConcurrentJobs == 4)
            #expect(backend.jobsCompleted == 4)
        }
    }

    @Test("Upload faults by ordinal and by filename: 429 (seconds, HTTP date), 5xx, 413, 400, non-JSON 202, 202 without jobId")
    func uploadFaults() async throws {
        let options = FakeScanBackend.Options(
            jobDuration: .milliseconds(100),
            faultsByUploadOrdinal: [1: .tooManyRequests(retryAfter: .seconds(7)),
                                    2: .tooManyRequests(retryAfter: .httpDate(secondsFromNow: 30)),
                                    3: .serverError(status: 502), 4: .payloadTooLarge],
            faultsByFilename: ["bad.jpg": [.badRequest(message: "cannot read image"), .nonJSONAccepted,
                                           .acceptedWithoutJobID]])
        try await withBackend(options) { backend, baseURL, _, photos in
            let good = try photos.photo("good.jpg")
            let bad = try photos.photo("bad.jpg")

            let seconds = try await Curl.upload(good, to: baseURL)
            #expect(seconds.status == 429 && seconds.header("Retry-After") == "7")
            let sent = Date()
            let dated = try await Curl.upload(good, to: baseURL)
            let answered = Date()
            #expect(dated.status == 429)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            let date = try #require(formatter.date(from: dated.header("Retry-After") ?? ""))
            // 30 s after the server answered (the header has whole seconds).
            #expect(date.timeIntervalSince(sent) >= 29 && date.timeIntervalSince(answered) <= 31)
            #expect(try await Curl.upload(good, to: baseURL).status == 502)
            #expect(try await Curl.upload(good, to: baseURL).status == 413)

            let badRequest = try await Curl.upload(bad, to: baseURL)
            #expect(badRequest.status == 400)
            #expect(try badRequest.json()["error"] as? String == "cannot read image")
            let nonJSON = try await Curl.upload(bad, to: baseURL)
            #expect(nonJSON.status == 202)
            #expect((try? JSONSerialization.jsonObject(with: Data(nonJSON.body))) == nil)
            let withoutJobID = try await Curl.upload(bad, to: baseURL)
            #expect(withoutJobID.status == 202)
            #expect(try withoutJobID.json()["jobId"] == nil)
            #expect(try withoutJobID.json()["streamUrl"] is String)
            // The list is used up: the fourth upload of bad.jpg is answered normally.
            #expect(try await Curl.upload(bad, to: baseURL).status == 202)

            #expect(backend.uploads.map(\.status) == [429, 429, 502, 413, 400, 202, 202, 202])
            #expect(backend.uploads.map(\.fault) == [.tooManyRequests(retryAfter: .seconds(7)),
                                                     .tooManyRequests(retryAfter: .httpDate(secondsFromNow: 30)),
                                                     .serverError(status: 502), .payloadTooLarge,
                                                     .badRequest(message: "cannot read image"), .nonJSONAccepted,
                                                     .acceptedWithoutJobID, nil])
            #expect(backend.tooManyRequestsSent == 2)
            #expect(backend.jobsCreated == 1)
        }
    }

    @Test("An upload that stalls is never answered: the client times out, the upload is recorded with status 0 and no job")
    func stalledUpload() async throws {
        let options = FakeScanBackend.Options(jobDuration: .milliseconds(100), faultsByUploadOrdinal: [1: .stallUpload])
        let backend = FakeScanBackend(options: options)
        let baseURL = try backend.start()
        defer { backend.stop() }
        let client = try HTTPClient(configuration: HTTPClientConfiguration(requestTimeout: .milliseconds(200)))
        defer { client.close() }
        let request = HTTPRequest(.post, baseURL + "/v3/jobs/scans", headers: [("Content-Type", "image/jpeg")], body: [0xFF, 0xD8])
        let error = await #expect(throws: HTTPError.self) { _ = try await client.send(request) }
        guard case .timedOut(_, let limit, _, _)? = error else {
            Issue.record("expected timedOut, got \(String(describing: error))")
            return
        }
        #expect(limit == .milliseconds(200))
        #expect(backend.uploads.map(\.status) == [0])
        #expect(backend.uploads.map(\.fault) == [.stallUpload])
        #expect(backend.jobsCreated == 0)
    }

    @Test("Stream faults: job error, invalid JSON, confidence outside 0…1, a silent stream")
    func streamFaults() async throws {
        let options = FakeScanBackend.Options(
            jobDuration: .milliseconds(200), defaultDetections: Self.shelf,
            chooseFault: { upload in
                switch upload.filename {
                case "error.jpg": return .jobError(code: "provider_failed", message: "Gemini said no", afterResults: 1)
                case "broken.jpg": return .invalidJSONEvent
                case "sure.jpg": return .confidenceOutOfRange
                case "silent.jpg": return .silentStream
                default: return nil
                }
            })
        try await withBackend(options) { backend, baseURL, client, photos in
            func streamURL(_ name: String) async throws -> String {
                try #require(try await Curl.upload(try photos.photo(name), to: baseURL).json()["streamUrl"] as? String)
            }
            let failed = try await stream(try await streamURL("error.jpg"), client: client)
            #expect(failed.filter { $0.name == "result" }.count == 1)
            #expect(!failed.contains { $0.name == "complete" })
            #expect(failed.last?.name == "error")
            #expect(try failed.last?.json()["code"] as? String == "provider_failed")
            #expect(try failed.last?.json()["message"] as? String == "Gemini said no")

            let broken = try await stream(try await streamURL("broken.jpg"), client: client)
            let firstResult = try #require(broken.first { $0.name == "result" })
            #expect(firstResult.id == "1")
            #expect((try? JSONSerialization.jsonObject(with: Data(firstResult.data.utf8))) == nil)

            let sure = try await stream(try await streamURL("sure.jpg"), client: client)
            #expect(try sure.first { $0.name == "result" }?.json()["confidence"] as? Double == 1.7)

            let silent = try await Curl.run(["-N", "--max-time", "0.5", "-H", "Accept: text/event-stream",
                                             try await streamURL("silent.jpg")])
            #expect(silent.exitStatus == 28)   // timed out
            #expect(silent.status == 200)
            #expect(silent.body.isEmpty)
            #expect(backend.uploads.allSatisfy { $0.status == 202 })
        }
    }

    @Test("Wire variants: multi-line data, CRLF, heartbeats, retry hint, a relative streamUrl, close-delimited streams")
    func wireVariants() async throws {
        let options = FakeScanBackend.Options(
            jobDuration: .milliseconds(300), detectionsByFilename: ["a.jpg": Self.shelf],
            heartbeatInterval: .milliseconds(50), multiLineData: true, lineEnding: .crlf,
            streamURLStyle: .absolutePath, streamFraming: .untilClose, reconnectDelayHint: .milliseconds(1500),
            holdsJobsUntilReleased: true)
        try await withBackend(options) { backend, baseURL, client, photos in
            let accepted = try await Curl.upload(try photos.photo("a.jpg"), to: baseURL)
            let reference = try #require(accepted.json()["streamUrl"] as? String)
            #expect(reference.hasPrefix("/v3/jobs/scans/"))
            let reading = Task { try await client.get(baseURL + reference, headers: [("Accept", "text/event-stream")]) }
            // The held job's stream has only its retry hint and heartbeats until it is released.
            try await eventually { backend.streamConnections.count == 1 }
            try await Task.sleep(for: .milliseconds(200))
            backend.releaseJobs()
            let response = try await reading.value
            #expect(response.headers["Transfer-Encoding"] == nil)
            let text = response.bodyText
            #expect(text.hasPrefix("retry: 1500\r\n\r\n: heartbeat\r\n"))
            #expect(!text.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
            let events = ReceivedEvent.parse(text)
            let result = try #require(events.first { $0.name == "result" })
            #expect(result.data.contains("\n"))   // several data: lines, joined
            #expect(try result.json()["title"] as? String == "DUNE")
            #expect(events.last?.name == "complete")
        }
    }

    @Test("Uploads that are not a readable JPEG, or lack the image part, get 400 with {\"error\"}; an EXIF orientation tag is noticed")
    func badUploadsAndOrientation() async throws {
        try await withBackend(.init(jobDuration: .milliseconds(100))) { backend, baseURL, _, photos in
            let text = try photos.file("notes.jpg", "not a photo")
            let notJPEG = try await Curl.upload(text, to: baseURL)
            #expect(notJPEG.status == 400)
            #expect(try notJPEG.json()["error"] is String)
            let noImage = try await Curl.run(["-F", "photo=@\(text.path)", "\(baseURL)/v3/jobs/scans"])
            #expect(noImage.status == 400)
            #expect(try noImage.json()["error"] as? String == "the form has no part named image")

            let turned = try photos.photo("turned.jpg", width: 400, height: 300, orientation: 6)
            let accepted = try await Curl.upload(turned, filename: "renamed.jpg", to: baseURL, provider: nil)
            #expect(accepted.status == 202)
            let uploads = backend.uploads
            #expect(uploads.map(\.status) == [400, 400, 202])
            #expect(uploads[0].pixelWidth == nil && uploads[0].byteCount == 11)
            #expect(uploads[2].filename == "renamed.jpg")
            #expect(uploads[2].provider == nil)
            #expect(uploads[2].hasOrientationTag)
            #expect(uploads[2].pixelWidth == 400 && uploads[2].pixelHeight == 300)   // stored, as the SOF says
        }
    }

    @Test("Unknown jobs and paths answer 404; cleanup of an unknown job is still recorded")
    func unknownJobs() async throws {
        try await withBackend(.init()) { backend, baseURL, client, _ in
            let response = try await client.get("\(baseURL)/v3/jobs/scans/job-99/events")
            #expect(response.status == 404)
            #expect(try await Curl.run(["-X", "DELETE", "\(baseURL)/v3/jobs/scans/job-99/cleanup"]).status == 404)
            #expect(try await client.get("\(baseURL)/v2/scans").status == 404)
            #expect(backend.cleanups == ["job-99"])
            #expect(backend.streamConnections.map(\.jobID) == ["job-99"])
        }
    }
}
