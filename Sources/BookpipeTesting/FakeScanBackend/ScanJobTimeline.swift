import Foundation

/// One server-sent event as the fake writes it.
public struct FakeServerSentEvent: Sendable, Hashable {
    /// `event:` (`progress`, `result`, `complete`, `error`).
    public var name: String
    /// `id:`, if any (results carry their 1-based position).
    public var id: String?
    /// `data:`; a text with line breaks is written as several `data:` lines.
    public var data: String

    /// Creates an event.
    public init(name: String, id: String? = nil, data: String) {
        self.name = name
        self.id = id
        self.data = data
    }

    /// The event's lines followed by the blank line that ends it.
    public func encoded(lineEnding: String) -> String {
        var text = "event: \(name)\(lineEnding)"
        if let id { text += "id: \(id)\(lineEnding)" }
        for line in data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(line)\(lineEnding)"
        }
        return text + lineEnding
    }
}

/// The events of one scan job and when (after its upload) each is due.
///
/// With `n` detections over a job of duration `D`: `progress` looking 0, 0.5, 1 at 0, 0.1 D,
/// 0.2 D; result `i` (and a `progress` reading `i/n` after it) at 0.2 D + 0.7 D × i/(n+1);
/// `progress` enriching 0, 0.5, 1 at 0.9 D, 0.95 D, D; `complete` at D. A job that fails with
/// ``FakeScanBackend/Fault/jobError(code:message:afterResults:)`` ends with `error` where the
/// next result would have been.
struct ScanJobTimeline: Sendable {
    struct Entry: Sendable {
        var due: Duration
        var event: FakeServerSentEvent
        /// 1-based result position, for `result` events.
        var resultNumber: Int?
    }

    var entries: [Entry]

    /// When the job stops running (its last event).
    var end: Duration { entries.last?.due ?? .zero }

    init(jobID: String, detections: [FakeScanBackend.Detection], duration: Duration, fault: FakeScanBackend.Fault?,
         multiLineData: Bool) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = multiLineData ? [.prettyPrinted, .sortedKeys] : [.sortedKeys]
        func json(_ value: some Encodable) -> String {
            // Encoding plain structs of strings and numbers cannot fail.
            (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        struct Progress: Encodable { var stage: String; var progress: Double; var message: String }
        struct Complete: Encodable { var jobId: String; var books: Int }
        struct Failure: Encodable { var code: String; var message: String }

        var entries: [Entry] = []
        func add(_ fraction: Double, _ name: String, _ data: String, id: String? = nil, result: Int? = nil) {
            entries.append(Entry(due: duration * fraction, event: FakeServerSentEvent(name: name, id: id, data: data),
                                 resultNumber: result))
        }
        func progress(_ fraction: Double, _ stage: String, _ value: Double, _ message: String) {
            add(fraction, "progress", json(Progress(stage: stage, progress: value, message: message)))
        }

        var detections = detections
        if !detections.isEmpty, fault == .confidenceOutOfRange { detections[0].confidence = 1.7 }
        let count = detections.count
        progress(0, "looking", 0, "Looking for book spines")
        progress(0.1, "looking", 0.5, "Looking for book spines")
        progress(0.2, "looking", 1, "Found \(count) spines")
        for (offset, detection) in detections.enumerated() {
            let number = offset + 1
            let fraction = 0.2 + 0.7 * Double(number) / Double(count + 1)
            if case .jobError(let code, let message, let afterResults)? = fault, offset == afterResults {
                add(fraction, "error", json(Failure(code: code, message: message)))
                self.entries = entries
                return
            }
            let data = (fault == .invalidJSONEvent && offset == 0) ? #"{"title": "BROK"# : json(detection)
            add(fraction, "result", data, id: String(number), result: number)
            progress(fraction, "reading", Double(number) / Double(count), "Read \(number) of \(count) spines")
        }
        if case .jobError(let code, let message, _)? = fault {
            add(0.9, "error", json(Failure(code: code, message: message)))
            self.entries = entries
            return
        }
        progress(0.9, "enriching", 0, "Looking up \(count) books")
        progress(0.95, "enriching", 0.5, "Looking up \(count) books")
        progress(1, "enriching", 1, "Looked up \(count) books")
        add(1, "complete", json(Complete(jobId: jobID, books: count)))
        self.entries = entries
    }

    /// The position to resume from after `lastEventID` (the entry after the one with that id);
    /// from the start when the id is missing or unknown.
    func resumePosition(after lastEventID: String?) -> Int {
        guard let lastEventID, let index = entries.firstIndex(where: { $0.event.id == lastEventID }) else { return 0 }
        return index + 1
    }
}
