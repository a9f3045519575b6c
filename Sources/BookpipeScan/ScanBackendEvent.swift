import BookpipeCore
import Foundation

/// One detected book as the backend sent it in a `result` event: its JSON object, kept as
/// received. The detection's fields are read by the one rule for detections from a scan file or
/// from the backend (`ScanDetectionRules` in BookpipeIngest, applied where the record is made), so
/// a bad confidence or box is treated the same whichever way a detection arrives.
public struct ScanBackendDetection: Sendable, Hashable {
    /// The title, when the event has one as text (for progress lines only).
    public var title: String?
    /// The event's JSON text as received (kept as the record's raw field).
    public var json: String
}

/// An event of a scan job's stream, decoded.
public enum ScanBackendEvent: Sendable, Hashable {
    /// `progress`: the job's stage (`looking`, `reading`, `enriching`) and how far it is (0…1).
    case progress(stage: String, progress: Double?, message: String?)
    /// `result`: one detected book.
    case result(ScanBackendDetection)
    /// `complete`: the job ended; `books` results were sent.
    case complete(books: Int)
    /// `error`: the job failed.
    case failed(code: String, message: String)
    /// An event type this client does not know (ignored).
    case other(type: String)

    /// Decodes a server-sent event.
    /// - Parameter event: the event as parsed.
    /// - Returns: the decoded event.
    /// - Throws: ``ScanFailure/badEvent(_:)`` when the data is not the JSON the protocol
    ///   describes (not a JSON object, a count that is not a number). A detection's own fields are
    ///   not judged here (see ``ScanBackendDetection``).
    public init(_ event: ServerSentEvent) throws(ScanFailure) {
        switch event.type {
        case "progress":
            let object = try Self.object(event)
            self = .progress(stage: object["stage"] as? String ?? "working", progress: Self.number(object["progress"]),
                             message: object["message"] as? String)
        case "result":
            self = .result(try Self.detection(event))
        case "complete":
            let object = try Self.object(event)
            guard let books = Self.number(object["books"]), books >= 0, books == books.rounded(.down) else {
                throw .badEvent("the complete event has no book count (books: \(Self.quote(object["books"])))")
            }
            self = .complete(books: Int(books))
        case "error":
            let object = (try? Self.object(event)) ?? [:]
            let code = (object["code"] as? String) ?? Self.number(object["code"]).map { "\(Int($0))" } ?? "unknown"
            self = .failed(code: code, message: object["message"] as? String ?? event.data)
        default:
            self = .other(type: event.type)
        }
    }

    private static func object(_ event: ServerSentEvent) throws(ScanFailure) -> [String: Any] {
        let parsed = try? JSONSerialization.jsonObject(with: Data(event.data.utf8), options: [.fragmentsAllowed])
        guard let object = parsed as? [String: Any] else {
            throw .badEvent("the \(event.type) event\(idText(event)) is not a JSON object: \(excerpt(event.data))")
        }
        return object
    }

    private static func detection(_ event: ServerSentEvent) throws(ScanFailure) -> ScanBackendDetection {
        let object = try object(event)
        return ScanBackendDetection(title: object["title"] as? String, json: event.data)
    }

    /// A JSON number (not a boolean) as a Double.
    static func number(_ value: Any?) -> Double? {
        // Not `value is Bool`: swift-corelibs-foundation casts any NSNumber holding 0 or 1 to Bool,
        // which refused `"books": 1` and `"confidence": 1`.
        guard let value else { return nil }
        if let number = value as? NSNumber {
            // Foundation bridges JSON true/false to an NSNumber of type char: refuse those.
            if String(cString: number.objCType) == "c" { return nil }
            return number.doubleValue
        }
        return nil
    }

    private static func idText(_ event: ServerSentEvent) -> String {
        event.lastEventID.isEmpty ? "" : " (id \(event.lastEventID))"
    }

    private static func quote(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "none" }
        if let text = value as? String { return "\"\(text)\"" }
        return "\(value)"
    }

    static func excerpt(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: "\\n")
        return flat.count > 80 ? "\"\(flat.prefix(80))…\"" : "\"\(flat)\""
    }
}
