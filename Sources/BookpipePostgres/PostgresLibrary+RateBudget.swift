import BookpipeCore
import BookpipeLibrary
import Foundation

extension PostgresLibrary {
    /// Takes a token from `host`'s bucket, shared by every worker on the library (issue 28 item 3):
    /// one statement under the host's row lock, on the server's clock. Returns zero when the
    /// request may go now, else how long to wait before asking again (the bucket refills at
    /// `rate` per second up to `burst`; a pause set by ``pauseHost(_:for:reason:)`` makes everyone wait).
    /// - Throws: ``StoreError`` when the server cannot be asked.
    public func takeHostToken(_ host: String, rate: Double, burst: Double) async throws(StoreError) -> Duration {
        let seconds = try withConnection("the rate budget of \(host)", reading: false) { connection in
            try connection.execute("SELECT take_host_token($1, $2::float8, $3::float8)",
                                   [host, String(max(rate, 1e-9)), String(max(burst, 1))], what: "the rate budget of \(host)")
                .scalar.flatMap(Double.init) ?? 0
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// Pauses every worker's requests to `host` for `duration` from now on the server's clock (a
    /// 429's Retry-After, a daily quota); a longer pause already set stands. The bucket is emptied.
    /// - Throws: ``StoreError`` when the pause cannot be stored.
    public func pauseHost(_ host: String, for duration: Duration, reason: String) async throws(StoreError) {
        try withConnection("the rate budget of \(host)", reading: false) { connection in
            try connection.execute("""
                INSERT INTO host_buckets (host, rate, burst, tokens, paused_until, pause_reason)
                VALUES ($1, 1, 1, 0, now() + $2::float8 * interval '1 second', $3)
                ON CONFLICT (host) DO UPDATE SET tokens = 0,
                    pause_reason = CASE WHEN excluded.paused_until > coalesce(host_buckets.paused_until, '-infinity')
                                        THEN excluded.pause_reason ELSE host_buckets.pause_reason END,
                    paused_until = greatest(host_buckets.paused_until, excluded.paused_until)
                """, [host, Self.seconds(duration), reason], what: "the rate budget of \(host)")
        }
    }
}
