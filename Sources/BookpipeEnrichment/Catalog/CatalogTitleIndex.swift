import BookpipeCore
import GRDB

/// The catalogue's title index: every search entry filed under its title's *core* — the comparison
/// key (``TitleNormalizer``) without leading articles — and, when the title has a subtitle, under
/// its main title's core too, with the word count of the key it came from.
///
/// It answers, with a few B-tree lookups instead of full-text queries, "which entries can earn
/// title points against this title" (``MatchScorer``'s exact and contains rules). Every such entry
/// has a core that is a whole-word prefix of the row's core or has the row's core as one:
///
/// - *exact*: equal keys, equal once one leading article is dropped, or equal main titles when one
///   side has a subtitle — equal cores;
/// - *contains*: the shorter title's words form a run of the longer one's preceded only by
///   articles — the shorter core is a word prefix of the longer core. The longer title has at most
///   `shorter words ÷` ``MatchPolicy/containsMinimumShare`` words and the shorter at least that
///   share of the longer's, which bounds the lookups (a one-word title is contained in nothing).
///
/// So ``candidates(title:in:)`` reads a bounded set: equality lookups for the prefixes of the row's
/// core (at most ``CatalogSearchQuery/maximumWords``), one range per core for the longer titles
/// (at most ``maximumRangeEntries`` entries), each entry at most once. The scorer then decides which
/// of them really agree; this type only never misses one (under the default policy).
///
/// Rule: ``core(_:)`` must drop exactly the articles ``MatchScorer`` ignores ("the", "a", "an");
/// if the scorer's rule changes, the index must be rebuilt (a new migration), or lookups miss
/// titles the scorer would accept.
enum CatalogTitleIndex {
    /// One place a search entry is filed.
    struct Entry: Hashable {
        /// The key without leading articles.
        var core: String
        /// Words of the key the core came from (articles included).
        var words: Int
    }

    /// The most index entries read from one range of longer titles.
    static let maximumRangeEntries = 400

    /// The articles the scorer ignores at the start of a title.
    private static let articles: Set<Substring> = ["the", "a", "an"]

    /// Where an entry with this display title is filed: its key's core, and its main title's core
    /// when the title has a subtitle (and the two differ). Empty when the title has no key.
    static func entries(forTitle title: String) -> [Entry] {
        entries(for: TitleNormalizer.normalize(title))
    }

    static func entries(for title: NormalizedTitle) -> [Entry] {
        var entries: [Entry] = []
        for key in title.hasSubtitle ? [title.key, title.mainKey] : [title.key] {
            let words = key.split(separator: " ")
            guard !words.isEmpty else { continue }
            let entry = Entry(core: core(words).joined(separator: " "), words: words.count)
            if !entries.contains(entry) { entries.append(entry) }
        }
        return entries
    }

    /// The words without leading articles, while more than one word is left (`"the road"` →
    /// `"road"`, `"the"` → `"the"`).
    static func core(_ words: [Substring]) -> ArraySlice<Substring> {
        var core = words[...]
        while core.count > 1, let first = core.first, articles.contains(first) { core = core.dropFirst() }
        return core
    }

    /// Files a search entry (inside the caller's transaction).
    static func insert(documentID: Int64, title: String, in db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO search_titles (title_core, words, document_id) VALUES (?, ?, ?)
            """)
        for entry in entries(forTitle: title) {
            try statement.execute(arguments: [entry.core, entry.words, documentID])
        }
    }

    /// A search document read through the index.
    struct Document {
        var id: Int64
        var unit: String
        var editionKey: String?
        var title: String
        var authors: String
        var year: Int?
        var titleKey: String
        var authorsKey: String
    }

    /// The documents filed under the same core as `title` or its main title, and under a longer
    /// core that begins with it (up to the share bound), each once, in id order: every document
    /// that holds all the words of the title (or of its main title) and can earn title points
    /// against it. Shorter titles are not read: they lack some of the row's words.
    static func documents(matching title: NormalizedTitle, in db: Database) throws -> [Document] {
        let share = MatchPolicy.default.containsMinimumShare
        let columns = "d.id, d.work_key, d.edition_key, d.title, d.authors, d.year, d.title_key, d.authors_key"
        let equal = try db.cachedStatement(sql: """
            SELECT \(columns) FROM search_titles AS t JOIN search_documents AS d ON d.id = t.document_id
            WHERE t.title_core = ?
            """)
        let longer = try db.cachedStatement(sql: """
            SELECT \(columns) FROM (
                SELECT title_core, words, document_id FROM search_titles WHERE title_core > ? AND title_core < ?
                LIMIT \(maximumRangeEntries)) AS t
            JOIN search_documents AS d ON d.id = t.document_id
            WHERE t.words <= ?
            """)
        var documents: [Int64: Document] = [:]
        func read(_ statement: Statement, _ arguments: StatementArguments) throws {
            let rows = try Row.fetchCursor(statement, arguments: arguments)
            while let row = try rows.next() {
                let id: Int64 = row[0]
                guard documents[id] == nil else { continue }
                documents[id] = Document(id: id, unit: row[1], editionKey: row[2], title: row[3], authors: row[4],
                                         year: row[5], titleKey: row[6], authorsKey: row[7])
            }
        }
        for key in title.hasSubtitle ? [title.key, title.mainKey] : [title.key] {
            let words = key.split(separator: " ")
            guard !words.isEmpty else { continue }
            let core = Self.core(words).joined(separator: " ")
            try read(equal, [core])
            // "Contains" needs the shorter title to be at least `share` of the longer one's words.
            let mostWords = Int((Double(words.count) / share + 1e-9).rounded(.down))
            if mostWords > words.count { try read(longer, [core + " ", core + "!", mostWords]) }
        }
        return documents.values.sorted { $0.id < $1.id }
    }
}
