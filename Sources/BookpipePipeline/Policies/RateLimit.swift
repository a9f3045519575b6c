/// The request-rate rule for one host: a token bucket that slows down on 429.
///
/// ```yaml
/// rateLimits:
///   openlibrary.org: { requestsPerSecond: 3, burst: 1 }
/// ```
/// Keys left out keep their defaults.
public struct RateLimit: Sendable, Codable, Equatable, CustomStringConvertible {
    /// The configured rate; the limiter never goes above it (default 3 requests per second).
    public var requestsPerSecond: Double
    /// Requests that may go out back to back after a quiet period (default 1: none bunched).
    public var burst: Int
    /// The adaptive rate never drops below this after repeated 429s (default 0.1 requests per second).
    public var minimumRequestsPerSecond: Double
    /// Consecutive successes needed before the rate is raised again after a slow-down (default 20).
    public var successesBeforeSpeedUp: Int
    /// Each raise adds this fraction of ``requestsPerSecond`` (default 0.1).
    public var speedUpFraction: Double

    /// Creates a rate rule.
    ///
    /// - Parameters:
    ///   - requestsPerSecond: the configured rate (must be > 0; smaller values are raised to 0.001).
    ///   - burst: bucket size (at least 1).
    ///   - minimumRequestsPerSecond: floor for the adaptive slow-down.
    ///   - successesBeforeSpeedUp: successes in a row before speeding up again.
    ///   - speedUpFraction: the share of the configured rate added per speed-up.
    public init(requestsPerSecond: Double = 3, burst: Int = 1, minimumRequestsPerSecond: Double = 0.1,
                successesBeforeSpeedUp: Int = 20, speedUpFraction: Double = 0.1) {
        self.requestsPerSecond = max(0.001, requestsPerSecond)
        self.burst = max(1, burst)
        self.minimumRequestsPerSecond = max(0.001, min(minimumRequestsPerSecond, self.requestsPerSecond))
        self.successesBeforeSpeedUp = max(1, successesBeforeSpeedUp)
        self.speedUpFraction = max(0.001, speedUpFraction)
    }

    /// Open Library's documented default: 3 requests per second, no bursts.
    public static let openLibrary = RateLimit(requestsPerSecond: 3, burst: 1)

    /// The limit used for hosts with no rule of their own: 1 request per second.
    public static let conservative = RateLimit(requestsPerSecond: 1, burst: 1)

    public var description: String {
        "\(requestsPerSecond) requests/s (burst \(burst), never below \(minimumRequestsPerSecond)/s after 429s)"
    }

    private enum CodingKeys: String, CodingKey {
        case requestsPerSecond, burst, minimumRequestsPerSecond, successesBeforeSpeedUp, speedUpFraction
    }

    public init(from decoder: any Decoder) throws {
        let defaults = RateLimit()
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let rate = try container.decodeIfPresent(Double.self, forKey: .requestsPerSecond) ?? defaults.requestsPerSecond
        guard rate > 0, rate.isFinite else {
            throw DecodingError.dataCorruptedError(
                forKey: .requestsPerSecond, in: container,
                debugDescription: "requestsPerSecond must be a number > 0 (got \(rate)); Open Library asks for about 3")
        }
        self.init(
            requestsPerSecond: rate,
            burst: try container.decodeIfPresent(Int.self, forKey: .burst) ?? defaults.burst,
            minimumRequestsPerSecond: try container.decodeIfPresent(Double.self, forKey: .minimumRequestsPerSecond)
                ?? defaults.minimumRequestsPerSecond,
            successesBeforeSpeedUp: try container.decodeIfPresent(Int.self, forKey: .successesBeforeSpeedUp)
                ?? defaults.successesBeforeSpeedUp,
            speedUpFraction: try container.decodeIfPresent(Double.self, forKey: .speedUpFraction)
                ?? defaults.speedUpFraction)
    }
}
