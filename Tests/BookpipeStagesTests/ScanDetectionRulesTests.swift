import BookpipeCore
import BookpipeIngest
import BookpipeScan
import BookpipeTesting
import Foundation
import Testing
@testable import BookpipeStages

/// One rule for a detection (issue 26, item 6): the same detection JSON, once inside a scan file
/// and once as the vision backend's `result` event, becomes the same record: the same title,
/// authors, ISBN, confidence, box, findings (code and severity) and review routing; or is refused
/// for the same reason.
@Suite struct ScanDetectionRulesTests {
    /// What a detection became, in the terms both paths must agree on.
    struct Outcome: Hashable, CustomStringConvertible {
        var title: String
        var authors: [String]
        var isbns: [String]
        var confidence: Double?
        var box: BoundingBox?
        var findings: [String]
        var review: ReviewStatus

        init(_ record: BookRecord) {
            var record = record
            Normalizer.normalize(&record, currentYear: 2026)
            title = record.title
            authors = record.authors
            isbns = record.rawISBNs
            confidence = record.scan?.confidence
            box = record.scan?.boundingBox
            ReviewRouting.standard.route(&record)
            // The photo's own findings (the test's scan file names none) are about the photo, not the detection.
            findings = record.findings.filter { !$0.code.hasPrefix("scan.photo") }.map { "\($0.code):\($0.severity)" }.sorted()
            review = record.reviewStatus
        }

        var description: String { "\(title) \(authors) \(isbns) \(String(describing: confidence)) \(String(describing: box)) \(findings) \(review)" }
    }

    /// A record, or the reason it was refused.
    enum Read: Hashable {
        case record(Outcome)
        case refused(String)
    }

    static let detections: [String] = [
        #"{"title": "Dune", "author": "Frank Herbert", "confidence": 0.93, "boundingBox": {"x": 0.1, "y": 0.1, "width": 0.05, "height": 0.8}}"#,
        #"{"title": "Emma", "confidence": 1.7, "boundingBox": {"x": 0.1, "y": 0.1, "width": 0.05, "height": 0.8}}"#,
        #"{"title": "Emma", "confidence": "high"}"#,
        #"{"title": "Emma", "confidence": -0.2, "box": [0.1, 0.1, 0.05, 0.8]}"#,
        #"{"title": "Persuasion", "author": ["Jane Austen", 7], "confidence": 0.59}"#,
        #"{"title": "Persuasion", "confidence": 0.6, "boundingBox": {"x": 0.9, "y": 0.1, "width": 0.5, "height": 0.8}}"#,
        #"{"title": "Persuasion", "confidence": 0.7, "bbox": {"x": "0.1", "y": 0.1, "width": 0.05}}"#,
        #"{"title": 1984, "isbn": 9780451524935, "confidence": 0.8}"#,
        #"{"title": "Beloved", "isbn": ["x"], "confidence": 0.8}"#,
        #"{"title": "Beloved", "isbn": "978-0-14-303943-3", "confidence": 0.3}"#,
        #"{"author": "Nobody", "confidence": 0.9}"#,
        #"{"title": "   ", "confidence": 0.9}"#,
    ]

    /// The detection read from a scan file: its record, or its rejection's reason.
    static func fromFile(_ json: String, in folder: URL) throws -> Read {
        let path = folder.appendingPathComponent("scan-\(UUID().uuidString).json").path
        try Data(#"{"originalImagePath": null, "detections": [\#(json)]}"#.utf8).write(to: URL(fileURLWithPath: path))
        let scan = try ScanResultFile(path: path)
        if let record = scan.records.first { return .record(Outcome(record)) }
        return .refused(scan.rejected.first?.reason ?? "nothing read")
    }

    /// The detection as the backend's result event: its record, or its rejection's reason.
    static func fromBackend(_ json: String) throws -> Read {
        guard case .result(let detection) = try ScanBackendEvent(ServerSentEvent(type: "result", data: json, lastEventID: "1")) else {
            return .refused("not a result event")
        }
        let photo = ScanPhotos.LoadedPhoto(path: "/photos/shelf.jpg", hash: "ab12", prepared: [], hadEarlierJob: false,
                                           input: InputFile(path: "/photos/shelf.jpg", fileHash: "ab12", format: "scan",
                                                                            formatDescription: "photo"))
        switch ScanPhotos.record(detection, index: 1, photo: photo) {
        case .success(let record): return .record(Outcome(record))
        case .failure(let rejection): return .refused(rejection.reason)
        }
    }

    @Test("A detection from a scan file and the same detection from the backend become the same record",
          arguments: detections)
    func sameRecordFromBothInputs(json: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("detections-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = try Self.fromFile(json, in: folder)
        let backend = try Self.fromBackend(json)
        switch (file, backend) {
        case (.record(let fromFile), .record(let fromBackend)):
            #expect(fromFile == fromBackend)
        case (.refused(let fileReason), .refused(let backendReason)):
            // The same reason, each naming the detection its own way.
            #expect(fileReason.replacingOccurrences(of: "detection 1 of scan \"", with: "").split(separator: "\"").last
                    == backendReason.split(separator: "\"").last)
        default:
            Issue.record("file: \(file), backend: \(backend)")
        }
    }

    @Test("The rules: a bad confidence is kept for review (never clamped, never dropped); a missing box is a warning")
    func theRules() throws {
        guard case .record(let high) = try Self.fromBackend(#"{"title": "Emma", "confidence": 1.7}"#) else {
            Issue.record("the backend's detection with confidence 1.7 was dropped")
            return
        }
        #expect(high.confidence == nil)
        #expect(high.review == ReviewStatus.needsReview)
        #expect(high.findings.contains("\(ScanFindingCode.confidenceInvalid):error"))
        #expect(high.findings.contains("\(ScanFindingCode.boxMissing):warning"))
        guard case .record(let sure) = try Self.fromBackend(Self.detections[0]) else { Issue.record("refused"); return }
        #expect(sure.review == ReviewStatus.verified)
        #expect(sure.box == BoundingBox(x: 0.1, y: 0.1, width: 0.05, height: 0.8))
        guard case .record(let listed) = try Self.fromBackend(Self.detections[3]) else { Issue.record("refused"); return }
        #expect(listed.box == BoundingBox(x: 0.1, y: 0.1, width: 0.05, height: 0.8))
        guard case .refused(let reason) = try Self.fromBackend(Self.detections[10]) else { Issue.record("accepted"); return }
        #expect(reason.contains("has no title"))
    }
}
