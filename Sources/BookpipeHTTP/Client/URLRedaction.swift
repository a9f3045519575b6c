/// Hides secrets in URLs before they reach a log, an error message or the store.
///
/// ```swift
/// URLRedaction.redact("https://www.googleapis.com/books/v1/volumes?q=isbn:123&key=AIza…")
/// // "https://www.googleapis.com/books/v1/volumes?q=isbn:123&key=REDACTED"
/// ```
public enum URLRedaction {
    /// Query parameters whose values are secrets (compared case-insensitively).
    public static let secretParameters: Set<String> = ["key", "api_key", "apikey", "access_token", "token", "password"]

    /// Returns `url` with the value of every secret query parameter replaced by `REDACTED`,
    /// and any `user:password@` part removed. Works on any string, parseable or not.
    public static func redact(_ url: String, parameters: Set<String> = secretParameters) -> String {
        var text = Substring(url)
        var fragment: Substring = ""
        if let hash = text.firstIndex(of: "#") {
            fragment = text[hash...]
            text = text[..<hash]
        }
        var base = text
        var query: Substring?
        if let question = text.firstIndex(of: "?") {
            base = text[..<question]
            query = text[text.index(after: question)...]
        }
        var result = redactUserInfo(String(base))
        if let query {
            let parts = query.split(separator: "&", omittingEmptySubsequences: false).map { part -> String in
                guard let equals = part.firstIndex(of: "=") else { return String(part) }
                let name = part[..<equals].lowercased()
                return parameters.contains(name) ? "\(part[..<equals])=REDACTED" : String(part)
            }
            result += "?" + parts.joined(separator: "&")
        }
        return result + fragment
    }

    private static func redactUserInfo(_ base: String) -> String {
        guard let scheme = base.range(of: "://") else { return base }
        let authorityStart = scheme.upperBound
        let rest = base[authorityStart...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return base }
        return String(base[..<authorityStart]) + "REDACTED@" + rest[rest.index(after: at)...]
    }
}
