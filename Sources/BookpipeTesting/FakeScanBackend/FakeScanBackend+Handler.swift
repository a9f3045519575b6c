import BookpipeImaging
import Foundation
import Synchronization

extension FakeScanBackend {
    /// Answers the requests and keeps the records; the server holds it, not the backend.
    final class Handler: Sendable {
        let options: Options
        let state = Mutex(State())
        static let uploadPath = "/v3/jobs/scans"

        init(options: Options) {
            self.options = options
        }

        /// All the detections the backend would send for a photo of this filename.
        func detections(forFilename filename: String?) -> [Detection] {
            guard let filename else { return options.defaultDetections }
            if let named = options.detectionsByFilename[filename] { return named }
            if let folder = options.sidecarDirectory {
                let stem = (filename as NSString).deletingPathExtension
                let sidecar = folder.appendingPathComponent(stem + ".json")
                if let detections = try? Detection.sidecar(at: sidecar) { return detections }
            }
            return options.defaultDetections
        }

        func respond(to request: HTTPRequestHead) -> ScriptedResponse {
            let jobsPrefix = Self.uploadPath + "/"
            switch request.method {
            case "POST" where request.path == Self.uploadPath:
                return upload(request)
            case "GET" where request.path.hasPrefix(jobsPrefix) && request.path.hasSuffix("/events"):
                let jobID = String(request.path.dropFirst(jobsPrefix.count).dropLast("/events".count))
                return eventStream(jobID: jobID, request: request)
            case "DELETE" where request.path.hasPrefix(jobsPrefix) && request.path.hasSuffix("/cleanup"):
                let jobID = String(request.path.dropFirst(jobsPrefix.count).dropLast("/cleanup".count))
                return cleanup(jobID: jobID)
            default:
                return .json(#"{"error": "no such endpoint: \#(request.method) \#(request.path)"}"#, status: 404)
            }
        }

        private func upload(_ request: HTTPRequestHead) -> ScriptedResponse {
            let provider = request.header("X-AI-Provider")
            let imagePart: ReceivedMultipartForm.Part?
            let formError: String?
            do {
                let form = try ReceivedMultipartForm(body: request.body, contentType: request.header("Content-Type"))
                imagePart = form.part(named: "image")
                formError = imagePart == nil ? "the form has no part named image" : nil
            } catch {
                imagePart = nil
                formError = error.reason
            }
            let filename = imagePart?.filename
            let bytes = imagePart?.body ?? []
            let header = try? ImageDecoder().header(of: bytes, file: filename ?? "image")
            let imageError: String? = formError ?? (header == nil && options.rejectsUnreadableImages
                ? "cannot read the image: not a JPEG with a readable header" : nil)
            let detections = detections(forFilename: filename)
            let now = ContinuousClock.now

            return state.withLock { state -> ScriptedResponse in
                let ordinal = state.uploads.count + 1
                let attempt = (filename.map { state.uploadsPerFilename[$0, default: 0] } ?? 0) + 1
                if let filename { state.uploadsPerFilename[filename] = attempt }
                var upload = Upload(ordinal: ordinal, provider: provider, filename: filename,
                                    pixelWidth: header?.storedWidth, pixelHeight: header?.storedHeight,
                                    byteCount: bytes.count,
                                    hasOrientationTag: Orientation.exifTagValue(inJPEG: bytes) != nil,
                                    arrival: state.startedAt.duration(to: now), status: 202)
                defer { state.uploads.append(upload) }

                let context = UploadContext(ordinal: ordinal, filename: filename, attemptForFilename: attempt,
                                            provider: provider)
                let fault = options.faultsByUploadOrdinal[ordinal]
                    ?? filename.flatMap { options.faultsByFilename[$0].flatMap { $0.indices.contains(attempt - 1) ? $0[attempt - 1] : nil } }
                    ?? options.chooseFault?(context)
                upload.fault = fault

                if let fault, fault.refusesUpload {
                    let response = Self.refusal(fault, jobID: "job-\(ordinal)", baseURL: state.baseURL)
                    if response.status == 429 { state.tooManyRequestsSent += 1 }
                    upload.status = response.fault == .stall ? 0 : response.status
                    return response
                }
                if let imageError {
                    upload.status = 400
                    return .json(Self.errorJSON(imageError), status: 400)
                }
                let running = state.jobs.values.filter { $0.isRunning(at: now) }.count
                if running >= options.maxConcurrentJobs {
                    state.tooManyRequestsSent += 1
                    upload.status = 429
                    return ScriptedResponse.json(Self.errorJSON("\(running) jobs are running; the limit is \(options.maxConcurrentJobs)"),
                                                 status: 429)
                        .withHeader("Retry-After", String(options.busyRetryAfterSeconds))
                }
                let jobID = "job-\(ordinal)"
                let timeline = ScanJobTimeline(jobID: jobID, detections: detections, duration: options.jobDuration,
                                               fault: fault, multiLineData: options.multiLineData)
                state.jobs[jobID] = Job(id: jobID, filename: filename, startedAt: options.holdsJobsUntilReleased ? nil : now,
                                         timeline: timeline, fault: fault)
                state.peakConcurrentJobs = max(state.peakConcurrentJobs, running + 1)
                upload.jobID = jobID
                return .json(#"{"jobId": "\#(jobID)", "streamUrl": "\#(streamURL(jobID: jobID, baseURL: state.baseURL))"}"#,
                             status: 202)
            }
        }

        func streamURL(jobID: String, baseURL: String) -> String {
            let path = "\(Self.uploadPath)/\(jobID)/events"
            switch options.streamURLStyle {
            case .absolute: return baseURL + path
            case .absolutePath: return path
            }
        }

        private static func refusal(_ fault: Fault, jobID: String, baseURL: String) -> ScriptedResponse {
            switch fault {
            case .tooManyRequests(let retryAfter):
                return ScriptedResponse.json(errorJSON("rate limit reached"), status: 429)
                    .withHeader("Retry-After", retryAfter.headerValue())
            case .serverError(let status):
                return .text("upstream vision provider failed\n", status: status)
            case .payloadTooLarge:
                return .json(errorJSON("image too large"), status: 413)
            case .badRequest(let message):
                return .json(errorJSON(message), status: 400)
            case .nonJSONAccepted:
                return ScriptedResponse(status: 202, headers: [("Content-Type", "text/html")],
                                        body: Array("<html><body>Accepted</body></html>\n".utf8))
            case .acceptedWithoutJobID:
                return .json(#"{"streamUrl": "\#(baseURL)\#(uploadPath)/\#(jobID)/events"}"#, status: 202)
            case .stallUpload:
                return .stall
            case .dropStream, .cutStream, .halfResultAfterReconnect, .jobError, .silentStream, .invalidJSONEvent,
                 .confidenceOutOfRange:
                return .status(500)   // not a refusal; never reached
            }
        }

        private static func errorJSON(_ message: String) -> String {
            let encoded = (try? JSONEncoder().encode(["error": message])).map { String(decoding: $0, as: UTF8.self) }
            return encoded ?? #"{"error": "error"}"#
        }

        func cleanup(jobID: String) -> ScriptedResponse {
            state.withLock { state in
                state.cleanups.append(jobID)
                guard state.jobs[jobID] != nil else { return .json(Self.errorJSON("no job \(jobID)"), status: 404) }
                state.jobs[jobID]?.isCleanedUp = true
                return ScriptedResponse(status: 204)
            }
        }

        func eventStream(jobID: String, request: HTTPRequestHead) -> ScriptedResponse {
            let lastEventID = request.header("Last-Event-ID")
            let now = ContinuousClock.now
            let found = state.withLock { state -> (job: Job, connection: Int)? in
                state.streamConnections.append(StreamConnection(jobID: jobID, lastEventID: lastEventID,
                                                                arrival: state.startedAt.duration(to: now)))
                guard var job = state.jobs[jobID], !job.isCleanedUp else { return nil }
                job.streamConnections += 1
                state.jobs[jobID] = job
                return (job, job.streamConnections)
            }
            guard let (job, connection) = found else {
                return .json(Self.errorJSON("no job \(jobID)"), status: 404)
            }
            let lineEnding = options.lineEnding.rawValue
            let heartbeat = options.heartbeatInterval
            let reconnectHint = options.reconnectDelayHint
            let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]
            return .streaming(headers: headers, framing: options.streamFraming) { stream in
                if job.fault == .silentStream {
                    stream.holdUntilClosed()
                    return .dropped
                }
                var lastWrite = ContinuousClock.now
                func send(_ text: String) -> Bool {
                    lastWrite = .now
                    return stream.write(text)
                }
                /// Waits until `instant`, with a heartbeat whenever the stream has been quiet too long.
                func wait(until instant: ContinuousClock.Instant) -> Bool {
                    while true {
                        let now = ContinuousClock.now
                        guard now < instant else { return true }
                        guard let heartbeat else { return stream.pause(for: now.duration(to: instant)) }
                        let beat = lastWrite.advanced(by: heartbeat)
                        if beat >= instant { return stream.pause(for: now.duration(to: instant)) }
                        guard stream.pause(for: now.duration(to: beat)), send(": heartbeat" + lineEnding) else {
                            return false
                        }
                    }
                }
                /// Waits until `due` after the job's clock started; a held job's stream only
                /// sends heartbeats until it is released.
                func waitUntilDue(_ due: Duration) -> Bool {
                    while true {
                        if let started = self.state.withLock({ $0.jobs[jobID]?.startedAt }) {
                            return wait(until: started.advanced(by: due))
                        }
                        guard wait(until: ContinuousClock.now.advanced(by: .milliseconds(10))) else { return false }
                    }
                }
                if let reconnectHint {
                    let milliseconds = reconnectHint.components.seconds * 1000
                        + reconnectHint.components.attoseconds / 1_000_000_000_000_000
                    guard send("retry: \(milliseconds)" + lineEnding + lineEnding) else { return .dropped }
                }
                let dropAfter: Int? = switch job.fault {
                case .dropStream(let count)? where connection == 1: count
                case .halfResultAfterReconnect(let count)? where connection == 1: count
                default: nil
                }
                let cut: (result: Int, bytes: Int, ending: StreamedBody.Ending)? =
                    if case .cutStream(let result, let bytes, let how)? = job.fault, connection == 1 {
                        (result, bytes, how.ending)
                    } else { nil }
                if case .halfResultAfterReconnect(let count)? = job.fault, connection == 2,
                   let next = job.timeline.entries.first(where: { $0.resultNumber == count + 1 }) {
                    let data = next.event.data
                    let half = FakeServerSentEvent(name: next.event.name, id: next.event.id,
                                                   data: String(data.prefix(data.count / 2)))
                    guard send(half.encoded(lineEnding: lineEnding)) else { return .dropped }
                }
                let entries = job.timeline.entries[job.timeline.resumePosition(after: lastEventID)...]
                for entry in entries {
                    // A cut "after 0 results" comes when the first result is due.
                    if dropAfter == 0, entry.resultNumber != nil { return .dropped }
                    if let cut, entry.resultNumber == cut.result {
                        let bytes = Array(entry.event.encoded(lineEnding: lineEnding).utf8)
                        guard waitUntilDue(entry.due), stream.write(Array(bytes.prefix(cut.bytes))) else { return .dropped }
                        return cut.ending
                    }
                    guard waitUntilDue(entry.due),
                          send(entry.event.encoded(lineEnding: lineEnding)) else { return .dropped }
                    if let number = entry.resultNumber, number == dropAfter { return .dropped }
                }
                return .finished
            }
        }
    }
}
