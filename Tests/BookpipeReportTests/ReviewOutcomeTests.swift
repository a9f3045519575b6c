import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

@Suite struct ReviewOutcomeTests {
    @Test("Before any review the outcomes are zero, not absent: the library keeps a review log")
    func noReviewYet() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let review = try await QualityReportBuilder(store: store).build().review
        #expect(review.reviewed == 0 && review.correctedInReview == 0 && review.verifiedAsRead == 0)
    }

    @Test("Reviewed records are counted once each from the review log: an edit or a choice that changed the match corrects, a verify or a choice that kept the match verifies")
    func outcomesFromTheLog() async throws {
        let (store, records) = try await ReportFixture.makeLibrary()
        try await store.verify(ids: [records[0].id, records[11].id])  // enriched; the scan detection
        try await store.edit(id: records[2].id, title: "The Left Hand of Darkness (50th)", authors: nil)
        try await store.verify(ids: [records[2].id])  // edited, then verified: still corrected
        try await store.choose(id: records[6].id, candidate: 1)  // no match before: corrected
        try await store.chooseNone(id: records[7].id)  // not found, still no match: kept as it was

        let report = try await QualityReportBuilder(store: store).build()
        #expect(report.review.reviewed == 5)
        #expect(report.review.correctedInReview == 2)
        #expect(report.review.verifiedAsRead == 3)
        // The status count (userEdited) lost the edit when the later verify made the record
        // `verified`; the log keeps it.
        #expect(report.review.corrected == 0)
        #expect(report.review.waiting == 0)

        let summary = ReportRenderer.terminalSummary(report).split(separator: "\n").map(String.init)
        #expect(summary.contains("  review: 0 waiting (0 scan detections, 0 uncertain matches), 5 reviewed (2 corrected, 3 verified as they were); encoding repairs in 1 records"))

        let object = try #require(try JSONSerialization.jsonObject(with: ReportRenderer.json(report)) as? [String: Any])
        let review = try #require(object["review"] as? [String: Any])
        #expect(review["reviewed"] as? Int == 5 && review["correctedInReview"] as? Int == 2 && review["verifiedAsRead"] as? Int == 3)
        let validator = try SchemaValidator(path: ReportFixture.repositoryRoot.appendingPathComponent("docs/report.schema.json").path)
        #expect(validator.validate(object) == [])

        let html = try ReportRenderer.html(report)
        #expect(html.contains("reviewed (corrected / verified as they were)"))
        #expect(html.contains("<bdi>5 (2 / 3)</bdi>"))
    }
}
