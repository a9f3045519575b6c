import BookpipeCore

extension DuplicateKind {
    /// What two records share when they are duplicates of this kind, as the engines compare it in
    /// the report's duplicate groups: the first valid ISBN-13; the work of an `enriched` record's
    /// match; the normalised title key (not empty) with the first normalised author key (none
    /// counts as ""). Nil when the record has nothing to share under this kind.
    public func key(of record: BookRecord) -> String? {
        switch self {
        case .sameISBN13:
            return record.normalized?.isbn13
        case .sameWork:
            guard record.status == .enriched, let work = record.enrichment?.match?.workKey, !work.isEmpty else { return nil }
            return work
        case .sameTitleAndFirstAuthor:
            guard let forms = record.normalized, !forms.titleKey.isEmpty else { return nil }
            return forms.titleKey + "\u{1F}" + (forms.authorKeys.first ?? "")
        }
    }

    /// The kind's name in a pipeline file (`dedupe-records`'s `by:`): `isbn13`, `work`, `title-author`.
    public var stepName: String {
        switch self {
        case .sameISBN13: "isbn13"
        case .sameWork: "work"
        case .sameTitleAndFirstAuthor: "title-author"
        }
    }

    /// What people read: `same ISBN-13`, `same work`, `same title and first author`.
    public var phrase: String {
        switch self {
        case .sameISBN13: "same ISBN-13"
        case .sameWork: "same work"
        case .sameTitleAndFirstAuthor: "same title and first author"
        }
    }
}
