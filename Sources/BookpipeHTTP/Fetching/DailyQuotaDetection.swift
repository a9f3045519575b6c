import Foundation

/// Recognises a response that says a daily quota is used up, in the error format of Google's
/// APIs (Google Books included):
///
/// ```json
/// {"error": {"code": 429,
///   "message": "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'books.googleapis.com' for consumer 'project_number:…'.",
///   "errors": [{"message": "…", "domain": "global", "reason": "rateLimitExceeded"}],
///   "status": "RESOURCE_EXHAUSTED"}}
/// ```
///
/// Older Google APIs answer `403` with reason `dailyLimitExceeded` ("Daily Limit Exceeded. The
/// quota will be reset at midnight Pacific Time (PT)."), or `dailyLimitExceededUnreg` without a
/// key. A `rateLimitExceeded`, `userRateLimitExceeded` or `quotaExceeded` reason counts as
/// daily only when the message (or an `ErrorInfo` detail's `quota_limit`) speaks of a day: the
/// same reasons are sent for per-minute limits, which ordinary backoff handles.
enum DailyQuotaDetection {
    /// Reasons that always mean a daily quota.
    static let dailyReasons: Set<String> = ["dailyLimitExceeded", "dailyLimitExceededUnreg"]
    /// Reasons that mean a daily quota when the wording says so.
    static let quotaReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "quotaExceeded",
                                            "RATE_LIMIT_EXCEEDED", "RESOURCE_EXHAUSTED"]

    /// The reason to record when `response` reveals an exhausted daily quota, or `nil`.
    ///
    /// Only 403 and 429 answers with a JSON `error` object are read. The returned text names the
    /// status, Google's reason code and the limit, never the message itself (it names the
    /// caller's project).
    static func reason(in response: HTTPResponse) -> String? {
        guard response.status == 429 || response.status == 403, !response.body.isEmpty,
              let root = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let error = root["error"] as? [String: Any] else { return nil }
        var reasons: [String] = []
        var texts: [String] = []
        if let message = error["message"] as? String { texts.append(message) }
        for item in error["errors"] as? [[String: Any]] ?? [] {
            if let reason = item["reason"] as? String { reasons.append(reason) }
            if let message = item["message"] as? String { texts.append(message) }
        }
        for detail in error["details"] as? [[String: Any]] ?? [] {
            if let reason = detail["reason"] as? String { reasons.append(reason) }
            if let metadata = detail["metadata"] as? [String: Any] {
                for key in ["quota_limit", "quota_limit_value", "quota_metric"] {
                    if let value = metadata[key] as? String { texts.append(value) }
                }
            }
        }
        // The overall status last: `errors[].reason` is the more precise name.
        if let status = error["status"] as? String { reasons.append(status) }
        let mentionsDay = texts.contains { text in
            let lowered = text.lowercased()
            return lowered.contains("per day") || lowered.contains("perday") || lowered.contains("daily")
        }
        let code: String
        if let daily = reasons.first(where: dailyReasons.contains) {
            code = daily
        } else if mentionsDay, let quota = reasons.first(where: quotaReasons.contains) {
            code = quota
        } else {
            return nil
        }
        let limit = texts.lazy.compactMap(Self.limitName).first.map { " ('\($0)')" } ?? ""
        return "HTTP \(response.status) (\(code)): the daily quota\(limit) is used up; "
            + "Google resets it at midnight Pacific time"
    }

    /// `Queries per day` out of `… and limit 'Queries per day' of service …`.
    static func limitName(in text: String) -> String? {
        guard let start = text.range(of: "limit '") else { return nil }
        let rest = text[start.upperBound...]
        guard let end = rest.firstIndex(of: "'") else { return nil }
        let name = rest[..<end]
        return name.isEmpty || name.count > 80 ? nil : String(name)
    }
}
