import Foundation
import Testing
@testable import BookpipeHTTP

@Suite struct DailyQuotaDetectionTests {
    static func response(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, body: Data(body.utf8), requestedURL: "https://www.googleapis.com/books/v1/volumes")
    }

    static let queriesPerDay = #"""
        {"error": {"code": 429, "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'books.googleapis.com' for consumer 'project_number:624717413613'.",
          "errors": [{"message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'books.googleapis.com' for consumer 'project_number:624717413613'.", "domain": "global", "reason": "rateLimitExceeded"}],
          "status": "RESOURCE_EXHAUSTED"}}
        """#

    @Test("Google's 429 'Queries per day' is a daily quota, named without the project number")
    func queriesPerDay() {
        let reason = DailyQuotaDetection.reason(in: Self.response(429, Self.queriesPerDay))
        #expect(reason == "HTTP 429 (rateLimitExceeded): the daily quota ('Queries per day') is used up; "
                + "Google resets it at midnight Pacific time")
        #expect(reason?.contains("624717413613") == false)
    }

    @Test("A 403 dailyLimitExceeded is a daily quota; an ErrorInfo quota_limit per day is too")
    func otherForms() {
        let old = #"{"error": {"errors": [{"domain": "usageLimits", "reason": "dailyLimitExceeded", "message": "Daily Limit Exceeded."}], "code": 403, "message": "Daily Limit Exceeded."}}"#
        #expect(DailyQuotaDetection.reason(in: Self.response(403, old))?.hasPrefix("HTTP 403 (dailyLimitExceeded)") == true)
        let details = #"{"error": {"code": 429, "message": "Resource has been exhausted.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "RATE_LIMIT_EXCEEDED", "metadata": {"quota_limit": "defaultPerDayPerProject"}}]}}"#
        #expect(DailyQuotaDetection.reason(in: Self.response(429, details)) != nil)
    }

    @Test("Per-minute limits, other statuses and other bodies are not daily quotas")
    func notDaily() {
        let perMinute = Self.queriesPerDay.replacingOccurrences(of: "per day", with: "per minute")
        #expect(DailyQuotaDetection.reason(in: Self.response(429, perMinute)) == nil)
        #expect(DailyQuotaDetection.reason(in: Self.response(503, Self.queriesPerDay)) == nil)
        #expect(DailyQuotaDetection.reason(in: Self.response(429, "Too Many Requests")) == nil)
        #expect(DailyQuotaDetection.reason(in: Self.response(403, #"{"error": {"code": 403, "message": "The caller does not have permission", "status": "PERMISSION_DENIED"}}"#)) == nil)
    }
}
