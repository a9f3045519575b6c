import Foundation
import Testing

@testable import BookpipeCore

private func detection(confidence: Double?, status: ReviewStatus = .verified) -> BookRecord {
    var record = BookRecord(origin: RecordOrigin(file: "scan.json", fileHash: "ab", row: 1, line: 2, format: "scan"),
                            title: "DUNE", reviewStatus: status)
    record.scan = ScanDetection(confidence: confidence, boundingBox: nil, photoPath: nil, index: 1)
    return record
}

@Suite struct ReviewRoutingTests {
    @Test("The default routing table: below 0.60 needs review, exactly 0.60 and missing are verified, invalid values need review",
          arguments: [
              (0.5999 as Double?, ReviewStatus.needsReview), (0.60, .verified), (nil, .verified), (0.0, .needsReview),
              (1.0, .verified), (0.97, .verified), (1.7, .needsReview), (-0.2, .needsReview), (.nan, .needsReview),
              (.infinity, .needsReview),
          ])
    func defaultTable(confidence: Double?, expected: ReviewStatus) {
        #expect(ReviewRouting.standard.status(forConfidence: confidence) == expected)
        #expect(ReviewRouting.standard.status(for: detection(confidence: confidence)) == expected)
    }

    @Test("The threshold is a parameter; an unusable one is an error saying what to use")
    func threshold() throws {
        let strict = try ReviewRouting(threshold: 0.8)
        #expect(strict.status(forConfidence: 0.79) == .needsReview)
        #expect(strict.status(forConfidence: 0.8) == .verified)
        #expect(try ReviewRouting(threshold: 0).status(forConfidence: 0) == .verified)
        #expect(try ReviewRouting().threshold == 0.60)
        #expect(throws: ReviewRoutingError.invalidThreshold(1.5)) { try ReviewRouting(threshold: 1.5) }
        #expect(throws: ReviewRoutingError.invalidThreshold(-0.1)) { try ReviewRouting(threshold: -0.1) }
        #expect(throws: ReviewRoutingError.self) { try ReviewRouting(threshold: .nan) }
        #expect(ReviewRoutingError.invalidThreshold(1.5).description == "The review threshold 1.5 is not a number in 0…1. "
            + "Use a confidence such as 0.60 (the default): detections below it go to review.")
    }

    @Test("A record with an invalid-confidence finding needs review although its confidence is missing")
    func invalidConfidenceFinding() {
        var record = detection(confidence: nil)
        #expect(ReviewRouting.standard.status(for: record) == .verified)
        record.addFinding(Finding(code: ScanFindingCode.confidenceInvalid, severity: .error, field: "confidence",
                                  message: "the confidence is 1.7"))
        #expect(ReviewRouting.standard.status(for: record) == .needsReview)
        ReviewRouting.standard.route(&record)
        #expect(record.reviewStatus == .needsReview)
        #expect(record.findings.map(\.code) == [ScanFindingCode.confidenceInvalid])
    }

    @Test("Routing a low-confidence detection sets needsReview and says why; it never lowers another status")
    func route() {
        var low = detection(confidence: 0.42)
        ReviewRouting.standard.route(&low)
        #expect(low.reviewStatus == .needsReview)
        #expect(low.findings == [Finding(
            code: ScanFindingCode.lowConfidence, severity: .info, field: "confidence",
            message: "The detector's confidence 0.42 is below the review threshold 0.6; a person checks this detection (bookpipe review).")])
        ReviewRouting.standard.route(&low)
        #expect(low.findings.count == 1)

        var edited = detection(confidence: 0.42, status: .userEdited)
        ReviewRouting.standard.route(&edited)
        #expect(edited.reviewStatus == .userEdited)
        #expect(edited.findings.isEmpty)

        var sure = detection(confidence: 0.9)
        ReviewRouting.standard.route(&sure)
        #expect(sure.reviewStatus == .verified)
        #expect(sure.findings.isEmpty)
    }

    @Test("Records that are not scan detections are left alone")
    func notScans() {
        var row = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "ab", row: 1, line: 2), title: "Dune")
        #expect(ReviewRouting.standard.status(for: row) == nil)
        ReviewRouting.standard.route(&row)
        #expect(row.reviewStatus == .verified)
    }

    @Test("A detection's index survives encoding, and detections stored before the field decode with none")
    func detectionIndexCoding() throws {
        let detection = ScanDetection(confidence: 0.5, boundingBox: nil, photoPath: "/s/shelf.jpg", index: 3)
        let encoded = try JSONEncoder().encode(detection)
        #expect(try JSONDecoder().decode(ScanDetection.self, from: encoded) == detection)
        let old = try JSONDecoder().decode(ScanDetection.self, from: Data(#"{"confidence":0.5,"photoPath":"/s/shelf.jpg"}"#.utf8))
        #expect(old == ScanDetection(confidence: 0.5, boundingBox: nil, photoPath: "/s/shelf.jpg"))
        #expect(old.index == nil)
    }
}
