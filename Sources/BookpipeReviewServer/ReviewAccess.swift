import Foundation

/// The secrets that keep the review server to the person who started it: the access token (in
/// the URL printed once, then an HttpOnly SameSite=Strict cookie) and the CSRF token every POST
/// carries in a header. Both are 32 bytes from the system's random number generator, as hex.
///
/// Another user of the machine can reach 127.0.0.1 but cannot read the terminal the URL was
/// printed to, so without the token every page and action is 403. A page from another site
/// cannot read the CSRF token (same-origin policy) nor send the cookie (SameSite=Strict).
public struct ReviewAccess: Sendable, Hashable {
    /// The access token: in the printed URL, then the cookie.
    public let token: String
    /// The token every data-changing request carries in `X-CSRF-Token`.
    public let csrf: String
    /// The cookie's name.
    public static let cookieName = "bookpipe_review"

    /// Fresh random tokens.
    public init() {
        var generator = SystemRandomNumberGenerator()
        token = Self.randomHex(using: &generator)
        csrf = Self.randomHex(using: &generator)
    }

    /// Given tokens (tests).
    public init(token: String, csrf: String) {
        self.token = token
        self.csrf = csrf
    }

    /// 32 random bytes as 64 lower-case hex digits.
    static func randomHex(using generator: inout some RandomNumberGenerator) -> String {
        var text = ""
        text.reserveCapacity(64)
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            text += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return text
    }

    /// Whether `given` is `expected`, in time that does not depend on where they differ.
    static func matches(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let left = Array(given.utf8), right = Array(expected.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }

    /// The access token from a `Cookie` header, if it carries ours.
    static func cookieToken(_ header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces) == cookieName {
                return pair[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The `Set-Cookie` value that keeps the token for the rest of the session.
    var setCookie: String { "\(Self.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict" }
}
