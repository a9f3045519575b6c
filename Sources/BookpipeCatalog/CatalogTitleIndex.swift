import BookpipeEnrichment
import BookpipeCore
import GRDB

/// The catalogue's title index: every search entry filed under its title's *core* — the comparison
/// key (``TitleNormalizer``) without leading articles — and, when the title has a subtitle, under
/// its main title's core too, with the word count of the key it came from and a 64-bit signature
/// of its authors' words.
///
/// It answers, with B-tree lookups instead of full-text queries, "which entries hold every word of
/// this title and can earn title points against it" (``MatchScorer``'s exact and contains rules):
///
/// - *exact*: equal keys, equal once one leading article is dropped, or equal main titles when one
///   side has a subtitle — equal cores;
/// - *contains*, the entry being the longer title: the row's core is a word prefix of the entry's,
///   and the entry has at most `row words ÷` ``MatchPolicy/containsMinimumShare`` words.
///   (A shorter entry lacks some of the row's words, so the full-text steps never found it either.)
///
/// Reads are bounded: the entries of an equal core whose author signature meets the row's author
/// (author agreement needs a shared word), then the shortest others (``maximumOtherEntries``), and at
/// most ``maximumRangeEntries`` index entries for the longer titles. The scorer decides which of them
/// really agree.
///
/// Rule: ``core(_:)`` must drop exactly the articles ``MatchScorer`` ignores ("the", "a", "an"), and
/// ``authorSignature(_:)`` must never change; if either does, the index must be rebuilt (a new
/// migration), or lookups miss titles the scorer would accept.
enum CatalogTitleIndex {
    /// One place a search entry is filed.
    struct Entry: Hashable {
        /// The key without leading articles.
        var core: String
        /// Words of the key the core came from (articles included).
        var words: Int
        /// Words of the whole title's key (more than ``words`` for a main title's entry).
        var titleWords: Int
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

    /// The most index entries read from one range of longer titles.
    static let maximumRangeEntries = 400
    /// The most entries of an equal core read without the row's author (shortest first).
    static let maximumOtherEntries = 20

    /// The articles the scorer ignores at the start of a title.
    private static let articles: Set<Substring> = ["the", "a", "an"]

    /// Where an entry with this display title is filed: its key's core, and its main title's core
    /// when the title has a subtitle (and the two differ). Empty when the title has no key.
    static func entries(forTitle title: String) -> [Entry] {
        let normalized = TitleNormalizer.normalize(title)
        var entries: [Entry] = []
        let titleWords = normalized.key.split(separator: " ").count
        for key in normalized.hasSubtitle ? [normalized.key, normalized.mainKey] : [normalized.key] {
            let words = key.split(separator: " ")
            guard !words.isEmpty else { continue }
            let entry = Entry(core: core(words).joined(separator: " "), words: words.count, titleWords: titleWords)
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

    /// A 64-bit signature of the words of author keys: one bit per word (FNV-1a of its UTF-8, modulo
    /// 64). Two keys that share a word share a bit; the converse is only likely.
    static func authorSignature(_ keys: some Sequence<some StringProtocol>) -> Int64 {
        var signature: UInt64 = 0
        for key in keys {
            for word in key.split(separator: " ") where word != ";" {
                var hash: UInt64 = 0xCBF2_9CE4_8422_2325
                for byte in word.utf8 {
                    hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                }
                signature |= 1 << (hash % 64)
            }
        }
        return Int64(bitPattern: signature)
    }

    /// Files a search entry (inside the caller's transaction).
    static func insert(documentID: Int64, title: String, authorsKey: String, in db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT OR IGNORE INTO search_titles (title_core, words, document_id, title_words, author_signature)
            VALUES (?, ?, ?, ?, ?)
            """)
        let signature = authorSignature([authorsKey])
        for entry in entries(forTitle: title) {
            try statement.execute(arguments: [entry.core, entry.words, documentID, entry.titleWords, signature])
        }
    }

    /// Removes a search entry filed by ``insert(documentID:title:authorsKey:in:)`` with this title
    /// (inside the caller's transaction): its places are computed again, so the table needs no
    /// second index.
    static func delete(documentID: Int64, title: String, in db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            DELETE FROM search_titles WHERE title_core = ? AND words = ? AND document_id = ?
            """)
        for entry in entries(forTitle: title) {
            try statement.execute(arguments: [entry.core, entry.words, documentID])
        }
    }

    /// The documents that hold every word of `title` (or of its main title) and may earn title
    /// points against it, each once, in id order — bounded as the type's discussion says.
    ///
    /// - Parameters:
    ///   - title: The row's title.
    ///   - authorKeys: The row's author keys (``AuthorNormalizer/key(_:)``); empty when it names none.
    static func documents(matching title: NormalizedTitle, authorKeys: [String], in db: Database) throws -> [Document] {
        let share = MatchPolicy.default.containsMinimumShare
        // The filters run inside SQLite, so only the entries kept come back, in the index's order:
        // sorting them there (a sorter for every statement) cost more than the search's scoring
        // of its few kept entries; the shortest others are chosen here instead.
        let equal = try db.cachedStatement(sql: """
            SELECT document_id, title_words, (author_signature & ?) != 0 AS by_author FROM search_titles
            WHERE title_core = ? AND title_words >= ?
            """)
        // The range's limit counts the entries before the filters, as it always has.
        let longer = try db.cachedStatement(sql: """
            SELECT document_id, title_words, (author_signature & ?) != 0 AS by_author FROM (
                SELECT document_id, title_words, author_signature FROM search_titles
                WHERE title_core > ? AND title_core < ? AND words <= ? LIMIT \(maximumRangeEntries))
            WHERE title_words >= ?
            """)
        // All the chosen documents in one statement (one B-tree seek each, inside SQLite): one
        // statement a document cost a fifth of the enrichment's CPU (decision note 0020). They
        // come in the order of the ids passed (sorted here, not by a sorter in SQLite).
        let chosenDocuments = try db.cachedStatement(sql: """
            SELECT d.id, d.work_key, d.edition_key, d.title, d.authors, d.year, d.title_key, d.authors_key
            FROM json_each(?) AS q JOIN search_documents AS d ON d.id = q.value
            """)
        let signature = authorKeys.isEmpty ? 0 : authorSignature(authorKeys)
        let keys = title.hasSubtitle ? [title.key, title.mainKey] : [title.key]
        // A title holding all the row's (or main title's) words has at least that many words.
        let fewestWords = keys.map { Set($0.split(separator: " ")).count }.min() ?? 0
        var byAuthor = Set<Int64>()
        var others: [(words: Int, id: Int64)] = []
        // Every entry whose signature meets the row's, and every other (a document's entries share
        // its signature and title words, so an id is never both).
        func collect(_ statement: Statement, _ arguments: StatementArguments) throws {
            let rows = try Row.fetchCursor(statement, arguments: arguments)
            while let row = try rows.next() {
                let id: Int64 = row[0]
                if row[2] as Bool {
                    byAuthor.insert(id)
                } else {
                    others.append((row[1], id))
                }
            }
        }
        for key in keys {
            let words = key.split(separator: " ")
            guard !words.isEmpty else { continue }
            let core = Self.core(words).joined(separator: " ")
            try collect(equal, [signature, core, fewestWords])
            // "Contains" needs the shorter title to be at least `share` of the longer one's words.
            let mostWords = Int((Double(words.count) / share + 1e-9).rounded(.down))
            if mostWords > words.count { try collect(longer, [signature, core + " ", core + "!", mostWords, fewestWords]) }
        }
        var ids = byAuthor
        for other in others.sorted(by: { ($0.words, $0.id) < ($1.words, $1.id) }) where !ids.contains(other.id) {
            if ids.count >= byAuthor.count + maximumOtherEntries { break }
            ids.insert(other.id)
        }
        guard !ids.isEmpty else { return [] }
        var documents: [Document] = []
        documents.reserveCapacity(ids.count)
        let rows = try Row.fetchCursor(chosenDocuments, arguments: ["[" + ids.sorted().map(String.init).joined(separator: ",") + "]"])
        while let row = try rows.next() {
            documents.append(Document(id: row[0], unit: row[1], editionKey: row[2], title: row[3], authors: row[4],
                                      year: row[5], titleKey: row[6], authorsKey: row[7]))
        }
        // In id order, whatever order the join returned them in.
        documents.sort { $0.id < $1.id }
        return documents
    }
}
