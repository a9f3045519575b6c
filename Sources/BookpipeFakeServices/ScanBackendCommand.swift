// `bookpipe-fake-services scan-backend`: the fake vision backend of issue 15 as a program, for
// benchmarks/scan and docs/review.md's "scan a folder of shelf photos" walkthrough.
import BookpipeTesting
import Foundation

enum ScanBackendCommand {
    static let usage = """
        usage: bookpipe-fake-services scan-backend [--sidecars DIR] [--job-seconds S] [--max-jobs N]
                                                   [--heartbeat-seconds S] [--port P] [--faults all]
                                                   [--record FILE]
          --sidecars DIR       detections for PHOTO.jpg from DIR/PHOTO.json (a JSON list of
                               {title, author, isbn, confidence, boundingBox}); other photos get
                               five fixed books
          --job-seconds S      time from upload to `complete` (default 3)
          --max-jobs N         jobs at once; more uploads get 429 Retry-After: 1 (default 4)
          --heartbeat-seconds S  a `: heartbeat` comment when a stream is quiet this long
          --port P             listen on this port (default 0: a free one)
          --faults all         misbehave on every other upload, in turn, in every way the fake can
                               (FakeScanBackend.Fault: 429, 5xx, 413, 400, bad 202s, cut and
                               half-resent streams, job errors, silent streams, bad events); an
                               upload that is never answered only once in 301 uploads
          --record FILE        on stop, write what was received as JSON: start time, uploads
                               (arrival s, provider, filename, pixel size, bytes, orientation
                               tag, status, job), streams, cleanups, 429s, peak jobs

        """

    /// Parses `arguments` (after `scan-backend`), serves until SIGTERM/SIGINT, prints counts.
    static func run(_ arguments: ArraySlice<String>) -> Never {
        var options = FakeScanBackend.Options()
        var port: UInt16 = 0
        var recordPath: String?
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument != "--help", argument != "-h" else {
                FileHandle.standardOutput.write(Data(usage.utf8))
                exit(0)
            }
            guard let value = iterator.next() else { fail("\(argument) needs a value") }
            switch argument {
            case "--sidecars":
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: value, isDirectory: &isFolder), isFolder.boolValue else {
                    fail("--sidecars \(value): no such folder")
                }
                options.sidecarDirectory = URL(fileURLWithPath: value, isDirectory: true)
            case "--job-seconds":
                guard let seconds = Double(value), seconds >= 0 else { fail("--job-seconds \(value): not a number of seconds") }
                options.jobDuration = .milliseconds(Int(seconds * 1000))
            case "--max-jobs":
                guard let count = Int(value), count > 0 else { fail("--max-jobs \(value): not a positive whole number") }
                options.maxConcurrentJobs = count
            case "--heartbeat-seconds":
                guard let seconds = Double(value), seconds > 0 else { fail("--heartbeat-seconds \(value): not a number of seconds") }
                options.heartbeatInterval = .milliseconds(Int(seconds * 1000))
            case "--faults":
                guard value == "all" else { fail("--faults \(value): only 'all' is known") }
                options.chooseFault = allFaults
            case "--record":
                recordPath = value
            case "--port":
                guard let number = UInt16(value) else { fail("--port \(value): not a port number") }
                port = number
            default:
                fail("unknown option \(argument)")
            }
        }

        let backend = FakeScanBackend(options: options)
        let baseURL: String
        do {
            baseURL = try backend.start(port: port)
        } catch {
            FileHandle.standardError.write(Data("cannot listen: \(error)\n".utf8))
            exit(1)
        }
        let startedAt = Date()
        FileHandle.standardOutput.write(Data("listening \(baseURL)\n".utf8))

        serveUntilStopped { [recordPath] in
            let uploads = backend.uploads
            let accepted = uploads.filter { $0.jobID != nil }.count
            FileHandle.standardOutput.write(Data(
                ("uploads \(uploads.count) (jobs \(accepted), 429s \(backend.tooManyRequestsSent)) "
                 + "streams \(backend.streamConnections.count) cleanups \(backend.cleanups.count) "
                 + "peak-concurrent-jobs \(backend.peakConcurrentJobs)\n").utf8))
            backend.stop()
            if let recordPath { writeRecord(of: backend, startedAt: startedAt, to: recordPath) }
        }
    }

    /// Every fault the fake knows, one upload in two, in turn (the soak's backend,
    /// benchmarks/soak): the n-th faulty upload gets the n-th fault of the list. A stalled upload
    /// holds a job slot until the client's upload timeout (2 minutes), so it comes once in 301
    /// uploads instead of in its turn.
    @Sendable static func allFaults(_ upload: FakeScanBackend.UploadContext) -> FakeScanBackend.Fault? {
        if upload.ordinal % 301 == 0 { return .stallUpload }
        guard upload.ordinal % 2 == 0 else { return nil }
        let turn = upload.ordinal / 2
        let faults: [FakeScanBackend.Fault] = [
            .tooManyRequests(retryAfter: .seconds(1)), .serverError(status: 503), .payloadTooLarge,
            .badRequest(message: "unreadable image"), .nonJSONAccepted, .acceptedWithoutJobID,
            .dropStream(afterResults: 2), .cutStream(inResult: 3, afterBytes: turn % 160, ending: .close),
            .cutStream(inResult: 2, afterBytes: (turn * 7) % 160, ending: .reset), .halfResultAfterReconnect(afterResults: 1),
            .jobError(code: "E_MODEL", message: "model overloaded", afterResults: 1), .silentStream, .invalidJSONEvent,
            .confidenceOutOfRange,
        ]
        return faults[turn % faults.count]
    }

    /// Writes the backend's records as one JSON object (for benchmarks/scan/run.sh).
    private static func writeRecord(of backend: FakeScanBackend, startedAt: Date, to path: String) {
        let options = backend.options
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        let uploads: [[String: Any]] = backend.uploads.map { upload in
            var entry: [String: Any] = [
                "ordinal": upload.ordinal, "arrival": seconds(upload.arrival), "bytes": upload.byteCount,
                "hasOrientationTag": upload.hasOrientationTag, "status": upload.status,
            ]
            entry["provider"] = upload.provider
            entry["filename"] = upload.filename
            entry["width"] = upload.pixelWidth
            entry["height"] = upload.pixelHeight
            entry["jobId"] = upload.jobID
            entry["fault"] = upload.fault?.description
            return entry
        }
        let record: [String: Any] = [
            "startedAt": startedAt.timeIntervalSince1970,
            "jobSeconds": seconds(options.jobDuration),
            "maxConcurrentJobs": options.maxConcurrentJobs,
            "uploads": uploads,
            "streams": backend.streamConnections.map { connection -> [String: Any] in
                var entry: [String: Any] = ["jobId": connection.jobID, "arrival": seconds(connection.arrival)]
                entry["lastEventId"] = connection.lastEventID
                return entry
            },
            "cleanups": backend.cleanups,
            "tooManyRequests": backend.tooManyRequestsSent,
            "peakConcurrentJobs": backend.peakConcurrentJobs,
        ]
        do {
            let data = try JSONSerialization.data(withJSONObject: record, options: [.prettyPrinted, .sortedKeys])
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            FileHandle.standardError.write(Data("--record \(path): cannot write: \(error)\n".utf8))
        }
    }

    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("scan-backend: \(message)\n\(usage)".utf8))
        exit(2)
    }
}
