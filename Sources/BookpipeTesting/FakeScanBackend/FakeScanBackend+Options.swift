import Foundation

extension FakeScanBackend {
    /// How the fake backend behaves.
    ///
    /// Detections for an upload come from, in order: ``detectionsByFilename`` (keyed by the
    /// multipart part's `filename`), the sidecar file `<stem>.json` in ``sidecarDirectory``,
    /// ``defaultDetections``.
    ///
    /// Faults are chosen per upload: ``faultsByUploadOrdinal`` (1 = the first `POST` this
    /// server received, answered or not), then ``faultsByFilename`` (the n-th upload of a file
    /// gets the n-th fault of its list, later uploads none), then ``chooseFault``.
    public struct Options: Sendable {
        /// Time from an upload to its `complete` event; progress and result events are spread
        /// over it (looking in the first 20 %, results through 90 %, enriching after).
        public var jobDuration: Duration
        /// Jobs that may run at once; an upload beyond gets `429` with ``busyRetryAfterSeconds``.
        /// A job runs from its upload until its `complete` (or `error`) time, whether or not
        /// anybody listens to its stream.
        public var maxConcurrentJobs: Int
        /// `Retry-After` (seconds) of the `429` sent when ``maxConcurrentJobs`` are running.
        public var busyRetryAfterSeconds: Int
        /// Detections per multipart filename (`"shelf1.jpg"`).
        public var detectionsByFilename: [String: [Detection]]
        /// A folder of sidecar files: `shelf1.json` holds the detections for `shelf1.jpg`.
        public var sidecarDirectory: URL?
        /// Detections of a photo nothing else names.
        public var defaultDetections: [Detection]
        /// When set, a comment line (`: heartbeat`) is sent whenever a stream has been quiet
        /// this long.
        public var heartbeatInterval: Duration?
        /// Write each event's JSON over several `data:` lines (pretty-printed) instead of one.
        public var multiLineData: Bool
        /// The streams' line ends.
        public var lineEnding: LineEnding
        /// How `streamUrl` is written in the `202` answer.
        public var streamURLStyle: StreamURLStyle
        /// How the event stream's body is framed.
        public var streamFraming: StreamedBody.Framing
        /// When set, every stream starts with `retry: N` (milliseconds).
        public var reconnectDelayHint: Duration?
        /// Answer `400` to an `image` part that is not a JPEG whose header can be read.
        public var rejectsUnreadableImages: Bool
        /// Faults by upload ordinal (1-based, counting every `POST` to the upload endpoint).
        public var faultsByUploadOrdinal: [Int: Fault]
        /// Faults by multipart filename: the n-th upload of that file gets the n-th fault.
        public var faultsByFilename: [String: [Fault]]
        /// Any other rule; asked only when the two dictionaries give no fault.
        public var chooseFault: (@Sendable (UploadContext) -> Fault?)?
        /// When true, a new job is running but its clock does not start until
        /// ``FakeScanBackend/releaseJobs()``: its stream sends nothing but heartbeats until then.
        /// Tests that need jobs to overlap use it instead of racing a short ``jobDuration``.
        public var holdsJobsUntilReleased: Bool

        /// Creates options; the defaults are a well-behaved backend taking 3 s per job.
        public init(jobDuration: Duration = .seconds(3), maxConcurrentJobs: Int = 4,
                    busyRetryAfterSeconds: Int = 1,
                    detectionsByFilename: [String: [Detection]] = [:], sidecarDirectory: URL? = nil,
                    defaultDetections: [Detection] = Detection.defaultSet,
                    heartbeatInterval: Duration? = nil, multiLineData: Bool = false,
                    lineEnding: LineEnding = .lf, streamURLStyle: StreamURLStyle = .absolute,
                    streamFraming: StreamedBody.Framing = .chunked, reconnectDelayHint: Duration? = nil,
                    rejectsUnreadableImages: Bool = true,
                    faultsByUploadOrdinal: [Int: Fault] = [:], faultsByFilename: [String: [Fault]] = [:],
                    chooseFault: (@Sendable (UploadContext) -> Fault?)? = nil,
                    holdsJobsUntilReleased: Bool = false) {
            self.holdsJobsUntilReleased = holdsJobsUntilReleased
            self.jobDuration = jobDuration
            self.maxConcurrentJobs = maxConcurrentJobs
            self.busyRetryAfterSeconds = busyRetryAfterSeconds
            self.detectionsByFilename = detectionsByFilename
            self.sidecarDirectory = sidecarDirectory
            self.defaultDetections = defaultDetections
            self.heartbeatInterval = heartbeatInterval
            self.multiLineData = multiLineData
            self.lineEnding = lineEnding
            self.streamURLStyle = streamURLStyle
            self.streamFraming = streamFraming
            self.reconnectDelayHint = reconnectDelayHint
            self.rejectsUnreadableImages = rejectsUnreadableImages
            self.faultsByUploadOrdinal = faultsByUploadOrdinal
            self.faultsByFilename = faultsByFilename
            self.chooseFault = chooseFault
        }
    }

    /// The line end of the event streams.
    public enum LineEnding: String, Sendable, Hashable {
        /// `\n`
        case lf = "\n"
        /// `\r\n`
        case crlf = "\r\n"
    }

    /// How the `streamUrl` of a `202` answer is written.
    public enum StreamURLStyle: Sendable, Hashable {
        /// `http://127.0.0.1:PORT/v3/jobs/scans/{jobId}/events`
        case absolute
        /// `/v3/jobs/scans/{jobId}/events`, a reference the client resolves against the base URL.
        case absolutePath
    }

    /// A `Retry-After` value.
    public enum RetryAfter: Sendable, Hashable, CustomStringConvertible {
        /// A number of seconds.
        case seconds(Int)
        /// An HTTP date this many seconds after the answer (`Sun, 06 Nov 1994 08:49:37 GMT`).
        case httpDate(secondsFromNow: Int)

        /// The header value, computed at `now`.
        public func headerValue(now: Date = Date()) -> String {
            switch self {
            case .seconds(let seconds):
                return String(seconds)
            case .httpDate(let seconds):
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "GMT")
                formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
                return formatter.string(from: now.addingTimeInterval(TimeInterval(seconds)))
            }
        }

        public var description: String {
            switch self {
            case .seconds(let seconds): return "\(seconds) s"
            case .httpDate(let seconds): return "HTTP date +\(seconds) s"
            }
        }
    }

    /// A way for the backend to misbehave with one upload or its job.
    public enum Fault: Sendable, Hashable, CustomStringConvertible {
        // Answers to the upload (no job is created).

        /// `429 Too Many Requests` with `Retry-After`.
        case tooManyRequests(retryAfter: RetryAfter)
        /// A `5xx` (default `503`) with a short text body.
        case serverError(status: Int = 503)
        /// `413 Content Too Large`.
        case payloadTooLarge
        /// `400 Bad Request` with `{"error": message}`.
        case badRequest(message: String)
        /// `202` whose body is not JSON.
        case nonJSONAccepted
        /// `202` with a `streamUrl` but no `jobId`.
        case acceptedWithoutJobID
        /// No answer at all: the connection is held until the client gives up (its upload times
        /// out, a transport failure). Recorded with status `0`.
        case stallUpload

        // Faults of the job's event stream (the job is created and answered with `202`).

        /// The first stream connection is cut (no terminating chunk) right after the
        /// `afterResults`-th `result` event (0: before the first one); a reconnection with
        /// `Last-Event-ID` resumes after that id. No cut when the job has fewer results.
        case dropStream(afterResults: Int)
        /// The first stream connection sends the events before the `inResult`-th `result` event
        /// (1-based), then only the first `afterBytes` bytes of that event (all of it when it is
        /// shorter), and is cut as `ending` says: whatever the offset, a reconnection with
        /// `Last-Event-ID` resumes after that id. No cut when the job has fewer results.
        case cutStream(inResult: Int, afterBytes: Int, ending: StreamCut)
        /// The first stream connection is cut (FIN) right after the `afterResults`-th `result`;
        /// the second starts with the first half of the next `result` (its data cut in the middle,
        /// with its id) as a whole event, as a proxy replaying a cut buffer would send it, then
        /// goes on properly. Later connections are normal.
        case halfResultAfterReconnect(afterResults: Int)
        /// After `afterResults` results the job fails with `error` `{"code", "message"}`; no
        /// `complete` follows.
        case jobError(code: String, message: String, afterResults: Int = 0)
        /// The stream's head is sent, then nothing at all (no heartbeats) until the client
        /// gives up.
        case silentStream
        /// The first `result` event's `data` is not JSON (`{"title": "BROK`).
        case invalidJSONEvent
        /// The first `result` event has `"confidence": 1.7`.
        case confidenceOutOfRange

        /// Whether the fault answers the upload itself (no job).
        public var refusesUpload: Bool {
            switch self {
            case .tooManyRequests, .serverError, .payloadTooLarge, .badRequest, .nonJSONAccepted,
                 .acceptedWithoutJobID, .stallUpload:
                return true
            case .dropStream, .cutStream, .halfResultAfterReconnect, .jobError, .silentStream, .invalidJSONEvent,
                 .confidenceOutOfRange:
                return false
            }
        }

        public var description: String {
            switch self {
            case .tooManyRequests(let retryAfter): return "429 (Retry-After \(retryAfter))"
            case .serverError(let status): return "\(status)"
            case .payloadTooLarge: return "413"
            case .badRequest(let message): return "400 (\(message))"
            case .nonJSONAccepted: return "202 with a non-JSON body"
            case .acceptedWithoutJobID: return "202 without jobId"
            case .stallUpload: return "upload never answered"
            case .dropStream(let count): return "stream dropped after \(count) results"
            case .cutStream(let result, let bytes, let ending):
                return "stream cut (\(ending)) after \(bytes) bytes of result \(result)"
            case .halfResultAfterReconnect(let count):
                return "stream dropped after \(count) results, half of the next sent on reconnecting"
            case .jobError(let code, _, let count): return "job error \(code) after \(count) results"
            case .silentStream: return "silent stream"
            case .invalidJSONEvent: return "event with invalid JSON"
            case .confidenceOutOfRange: return "confidence outside 0…1"
            }
        }
    }

    /// How a stream is cut (``Fault/cutStream(inResult:afterBytes:ending:)``).
    public enum StreamCut: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The connection is closed (FIN): under chunked framing the body lacks its last chunk;
        /// a body framed by the connection's end looks complete.
        case close
        /// The connection is reset (RST).
        case reset

        /// How the streamed body ends.
        public var ending: StreamedBody.Ending {
            switch self {
            case .close: return .dropped
            case .reset: return .reset
            }
        }

        public var description: String { rawValue }
    }

    /// What a fault rule knows about an upload.
    public struct UploadContext: Sendable, Hashable {
        /// 1 for the first `POST` this server received.
        public var ordinal: Int
        /// The multipart filename, if any.
        public var filename: String?
        /// 1 for the first upload of this filename, 2 for the second, …
        public var attemptForFilename: Int
        /// `X-AI-Provider`, if sent.
        public var provider: String?
    }
}
