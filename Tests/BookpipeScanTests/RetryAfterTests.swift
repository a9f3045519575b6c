import BookpipePipeline
import Foundation
import Testing

/// `Retry-After` as the scan client reads it (BookpipePipeline's parser, shared with enrichment).
@Suite struct ScanRetryAfterTests {
    @Test("Seconds and HTTP dates are both read; the delay is measured from now")
    func secondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter(headerValue: "3")?.delay(from: now) == .seconds(3))
        let date = HTTPDate.format(now.addingTimeInterval(5))
        #expect(RetryAfter(headerValue: date)?.delay(from: now) == .seconds(5))
        #expect(RetryAfter(headerValue: HTTPDate.format(now.addingTimeInterval(-60)))?.delay(from: now) == .zero)
        #expect(RetryAfter(headerValue: "soon") == nil)
    }
}
