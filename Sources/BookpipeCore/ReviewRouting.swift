/// Decides which bookshelf-scan detections a person must check (DESIGN.md §4, "Route for review").
///
/// The rules, for a threshold `t` (default 0.60):
///
/// | confidence | review status |
/// |---|---|
/// | a number in 0…1 below `t` | ``ReviewStatus/needsReview`` |
/// | a number in 0…1 at or above `t` (exactly 0.60 included) | ``ReviewStatus/verified`` |
/// | missing | ``ReviewStatus/verified`` |
/// | not a number in 0…1 (a string, 1.7, −0.2, NaN; see ``ScanFindingCode/confidenceInvalid``) | ``ReviewStatus/needsReview`` |
///
/// An invalid confidence is never clamped into a valid-looking value: the scan reader keeps the
/// record with no confidence and a finding that quotes what the file said, and this routing sends
/// it to a person, because nothing says how sure the detector was.
///
/// ```swift
/// let routing = try ReviewRouting(threshold: 0.60)
/// routing.status(forConfidence: 0.5999)   // .needsReview
/// routing.status(forConfidence: 0.60)     // .verified
/// routing.route(&record)                  // sets record.reviewStatus for a scan detection
/// ```
public struct ReviewRouting: Sendable, Hashable {
    /// The documented default threshold, 0.60.
    public static let defaultThreshold = 0.60

    /// Routing with the default threshold.
    public static let standard = ReviewRouting(validated: defaultThreshold)

    /// Detections whose confidence is below this value go to review.
    public let threshold: Double

    /// Creates a routing with a threshold (a pipeline parameter).
    ///
    /// - Parameter threshold: A number in 0…1: 0 routes only invalid confidences, 1 routes every
    ///   detection that is not fully sure.
    /// - Throws: ``ReviewRoutingError/invalidThreshold(_:)`` when the threshold is not a finite
    ///   number in 0…1.
    public init(threshold: Double = ReviewRouting.defaultThreshold) throws(ReviewRoutingError) {
        guard threshold.isFinite, threshold >= 0, threshold <= 1 else { throw .invalidThreshold(threshold) }
        self.threshold = threshold
    }

    private init(validated threshold: Double) {
        self.threshold = threshold
    }

    /// The review status a detection with this confidence gets.
    ///
    /// - Parameter confidence: The detector's confidence; nil when the detector gave none.
    /// - Returns: ``ReviewStatus/needsReview`` below the threshold and for any value that is not a
    ///   finite number in 0…1 (never clamped); ``ReviewStatus/verified`` otherwise, nil included.
    public func status(forConfidence confidence: Double?) -> ReviewStatus {
        guard let confidence else { return .verified }
        guard confidence.isFinite, confidence >= 0, confidence <= 1 else { return .needsReview }
        return confidence < threshold ? .needsReview : .verified
    }

    /// The review status a record should get, or nil when the record is not a scan detection.
    ///
    /// A record carrying a ``ScanFindingCode/confidenceInvalid`` finding needs review whatever
    /// its (then missing) confidence.
    ///
    /// - Parameter record: A record as read.
    /// - Returns: The status the rules give, or nil for a record that is not a scan detection.
    public func status(for record: BookRecord) -> ReviewStatus? {
        guard let scan = record.scan else { return nil }
        if record.findings.contains(where: { $0.code == ScanFindingCode.confidenceInvalid }) { return .needsReview }
        return status(forConfidence: scan.confidence)
    }

    /// Routes a record as read: a scan detection the rules send to review becomes
    /// ``ReviewStatus/needsReview`` and gets a ``ScanFindingCode/lowConfidence`` finding that says
    /// why.
    ///
    /// Only a record still ``ReviewStatus/verified`` (the reader's default) is changed, so a
    /// status an earlier stage set is never lowered. Apply it to records as they are read, not to
    /// records loaded from a library after a person reviewed them: a person's `verified` looks the
    /// same as the reader's default.
    ///
    /// - Parameter record: The record to route; records that are not scan detections are left alone.
    public func route(_ record: inout BookRecord) {
        guard record.reviewStatus == .verified, status(for: record) == .needsReview, let scan = record.scan else { return }
        record.reviewStatus = .needsReview
        if let confidence = scan.confidence {
            record.addFinding(Finding(
                code: ScanFindingCode.lowConfidence, severity: .info, field: "confidence",
                message: "The detector's confidence \(confidence) is below the review threshold \(threshold); "
                    + "a person checks this detection (bookpipe review)."))
        }
    }
}

/// A review-routing parameter that cannot be used.
public enum ReviewRoutingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The threshold is not a finite number in 0…1.
    case invalidThreshold(Double)

    /// The message for people: what is wrong and what to use instead.
    public var description: String {
        switch self {
        case .invalidThreshold(let value):
            return "The review threshold \(value) is not a number in 0…1. "
                + "Use a confidence such as 0.60 (the default): detections below it go to review."
        }
    }
}

/// The codes of the findings the scan reader and the review routing raise (``Finding/code``).
public enum ScanFindingCode {
    /// The confidence is not a number in 0…1 (a string, 1.7, −0.2, `NaN`, `Infinity`); the record
    /// keeps no confidence and goes to review.
    public static let confidenceInvalid = "scan.confidence-invalid"
    /// The confidence is below the review threshold.
    public static let lowConfidence = "scan.low-confidence"
    /// The detection has no bounding box: review shows the whole photo.
    public static let boxMissing = "scan.box-missing"
    /// The bounding box cannot be read, or lies outside the photo: review shows the whole photo.
    public static let boxInvalid = "scan.box-invalid"
    /// The author is neither text, a list of texts nor null; the record has no author.
    public static let authorInvalid = "scan.author-invalid"
    /// The title was a number in the file and was read as its text.
    public static let titleNotText = "scan.title-not-text"
    /// The ISBN was not text in the file: a number is read as its digits (and then checked like any
    /// ISBN); anything else (a list, an object, true) is left out.
    public static let isbnNotText = "scan.isbn-not-text"
    /// The scan names no photo (and none was given): review is text only.
    public static let photoMissing = "scan.photo-missing"
    /// The scan's photo was refused (a path escape, a missing file, not a regular file): review is
    /// text only.
    public static let photoRefused = "scan.photo-refused"
}
