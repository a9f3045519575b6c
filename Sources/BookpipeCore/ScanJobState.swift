/// Where one photo's scan job stands (`bookpipe scan`): the library keeps one per photo so that a
/// rerun skips photos whose job completed and sends the others again.
public struct ScanJobState: Sendable, Hashable {
    /// The phases of a photo's job.
    public enum Phase: String, Sendable, Hashable, Codable {
        /// An attempt is under way; its detections so far may be stored (a rerun replaces them).
        case running
        /// The job completed: every detection is stored.
        case complete
        /// Every attempt failed; the photo keeps no detections.
        case failed
    }

    /// The photo as the user named it.
    public var photo: String
    /// The photo's content fingerprint (the first half of its detections' ids).
    public var photoHash: String
    /// The provider of the current (or last) attempt.
    public var provider: String
    /// 1 for the first attempt, 2 for the fallback provider's.
    public var attempt: Int
    /// The phase.
    public var phase: Phase
    /// The backend's job id, once accepted.
    public var jobID: String?
    /// Detections of the completed job.
    public var books: Int?
    /// Why the photo failed.
    public var failure: String?
    /// Time from upload to `complete`.
    public var jobTime: Duration?
    /// 429 answers this photo's uploads got.
    public var rateLimited: Int

    /// Creates a state.
    public init(photo: String, photoHash: String, provider: String, attempt: Int, phase: Phase, jobID: String? = nil,
                books: Int? = nil, failure: String? = nil, jobTime: Duration? = nil, rateLimited: Int = 0) {
        self.photo = photo
        self.photoHash = photoHash
        self.provider = provider
        self.attempt = attempt
        self.phase = phase
        self.jobID = jobID
        self.books = books
        self.failure = failure
        self.jobTime = jobTime
        self.rateLimited = rateLimited
    }
}
