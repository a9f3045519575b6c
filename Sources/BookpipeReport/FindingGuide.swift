import BookpipeLibrary

/// What a person does about each finding code: the command that fixes or reviews it, and the
/// `bookpipe list …` query that lists every record of it, where one lists exactly those.
public enum FindingGuide {
    /// Codes the report computes itself (not stored on records): `finding:CODE` does not list
    /// them, so their drill-down is the findings' record ids, or a query of their own.
    static let computedQueries: [String: String?] = [
        "row.rejected": nil,
        "lookup.failed": "bookpipe list status:failed",
        "match.needs-selection": "bookpipe list status:needsCandidateSelection",
        "match.not-found": "bookpipe list status:notFound",
        "review.waiting": "bookpipe list review:needsReview",
        "duplicate.book": nil,
        "date.unparseable": nil,
        "author.empty": "bookpipe list missing:author",
        "year.outlier": nil,
        "pages.outlier": nil,
        "rating.outlier": nil,
        "date.read-before-publication": nil,
    ]

    /// The `bookpipe list …` command that lists every record of `code` in the whole library; nil
    /// when none lists exactly them (then the findings name their records).
    public static func query(for code: String) -> String? {
        if let computed = computedQueries[code] { return computed }
        if code == "title.missing" { return "bookpipe list finding:title" }
        return "bookpipe list finding:\(code)"
    }

    /// What fixes or reviews the findings of `code`.
    public static func action(for code: String) -> String {
        switch code {
        case "row.rejected": return "fix the line in the file (file:line) and run the same import again"
        case "lookup.failed": return "bookpipe enrich --failed"
        case "match.needs-selection", "review.waiting": return "bookpipe review"
        case "match.not-found": return "bookpipe show ID, then bookpipe review edit ID --title … --author …"
        case "duplicate.book": return "bookpipe show ID (names the other records); bookpipe link ID ID or bookpipe remove ID"
        case "date.unparseable", "date.read-before-publication":
            return "fix the date in the file and import it again (bookpipe show ID)"
        case "encoding.latin1-repaired": return "check the title in bookpipe show ID; export the file as UTF-8 next time"
        case "title.missing", "author.empty": return "bookpipe review edit ID --title … --author …"
        case "year.impossible", "year.outlier", "pages.outlier", "rating.outlier":
            return "fix the value in the file and import it again (bookpipe show ID)"
        case "isbn.leading-zero-restored": return "check the restored ISBN in bookpipe show ID (seven digits make it a guess)"
        case "isbn.10-13-disagree": return "bookpipe show ID, then fix the ISBN in the file and import it again"
        case _ where code.hasPrefix("isbn."):
            return QualityCodes.isInvalidISBN(code)
                ? "bookpipe list isbn:invalid, then fix the ISBN in the file and import it again"
                : "nothing to do: bookpipe repaired it (bookpipe show ID)"
        default: return "bookpipe show ID"
        }
    }

    /// The HTML page's section id for `code`.
    public static func section(for code: String) -> String {
        "code-" + code.map { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" ? String($0) : "_" }.joined()
    }
}
