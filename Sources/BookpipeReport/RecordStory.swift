import BookpipeCore
import BookpipeExport
import BookpipeLibrary
import Foundation

/// One record's whole story: the row as read, its normalised forms, findings, every lookup asked
/// for it with the cached answer, candidates with their breakdowns, the match, review history and
/// where each field came from. What `bookpipe show ID` prints.
public struct RecordStory: Sendable, Codable {
    /// The record's id.
    public var id: String
    /// Where it was read.
    public var source: Source
    /// The raw fields by column name (the header stored with the file), in column order.
    public var raw: [Field]
    /// The values read from the row.
    public var read: Read
    /// The normalised forms, when normalised.
    public var normalized: NormalizedForms?
    /// `enriched`, `notFound`, `failed`, `needsCandidateSelection`, `pending`.
    public var status: String
    /// Why the lookup failed, when it did.
    public var failure: String?
    /// `verified`, `needsReview`, `userEdited`, or `notRouted` for a CSV row nobody routed for review
    /// (the export writes `null`).
    public var reviewStatus: String
    /// Findings raised about it.
    public var findings: [Finding]
    /// The other records the report counts as its duplicates, by kind.
    public var duplicates: [Duplicate]
    /// Questions that enrichment asks for this record, with every cached answer.
    public var lookups: [Lookup]
    /// Candidates with their per-field breakdown, best first.
    public var candidates: [Candidate]
    /// The accepted match.
    public var match: Match?
    /// The scan detection, for scanned books.
    public var detection: ScanDetection?
    /// Review decisions, oldest first; null while the library keeps no review history.
    public var reviewHistory: [String]?
    /// What re-enrichments and review edits changed, oldest first: `<when> <field>: <old> → <new>
    /// (<kind>, <source>)`.
    public var changes: [String]
    /// Where each field's value came from: `file`, a source name, or `person`, under the export
    /// contract's keys (``LibraryExport/provenance(of:editedByPerson:)``).
    public var provenance: [String: String]
    /// The list the record is an entry of, and its key there (what makes a newer export of the
    /// list update it: ``ListIdentity``); nil for scan detections.
    public var entry: Entry?
    /// The other records that are the same book (``BookGrouping``), with why; empty when the
    /// record is a book of its own.
    public var sameBook: [BookPeer] = []

    /// Another record of the same book.
    public struct BookPeer: Sendable, Codable {
        /// Its id.
        public var record: String
        /// Its list, when it is an entry of one.
        public var list: String?
        /// Why it is the same book: `same ISBN-13 …`, `same matched edition …`, `linked by a
        /// person`, or `through <id>` when only a third record joins them.
        public var reason: String
    }

    /// A record's entry in its list.
    public struct Entry: Sendable, Codable {
        /// The list's name (`goodreads`, `generic:my-books`, or `import --list`'s).
        public var list: String
        /// The entry's key: `id:…`, `isbn:…` or `title:…|…`.
        public var key: String
    }

    /// Records that duplicate this one in one way (the report's `duplicate.*` findings).
    public struct Duplicate: Sendable, Codable {
        /// `same ISBN-13`, `same work`, `same normalised title and first author`.
        public var kind: String
        /// The other records' ids.
        public var records: [String]
    }

    /// Where a record was read.
    public struct Source: Sendable, Codable {
        /// The input file as given.
        public var file: String
        /// Its content fingerprint.
        public var fileHash: String
        /// 1-based data row.
        public var row: Int
        /// 1-based physical line.
        public var line: Int
        /// Detected format.
        public var format: String
        /// Scan file, for detections.
        public var scan: String?
    }

    /// One raw field.
    public struct Field: Sendable, Codable {
        /// The column name.
        public var column: String
        /// The value as read.
        public var value: String
    }

    /// The values read.
    public struct Read: Sendable, Codable {
        /// Title.
        public var title: String
        /// Authors.
        public var authors: [String]
        /// ISBN-like values as read.
        public var isbns: [String]
        /// Year.
        public var year: Int?
        /// Publisher.
        public var publisher: String?
        /// Pages.
        public var pages: Int?
        /// Shelf.
        public var shelf: String?
        /// Rating.
        public var rating: Double?
        /// Date added.
        public var dateAdded: String?
        /// Date read.
        public var dateRead: String?
        /// Binding (format) as read.
        public var binding: String?
        /// The reader's review text.
        public var review: String?
        /// Tags, bookshelves or collections.
        public var tags: [String]
    }

    /// A question asked of a source and its cached answer.
    public struct Lookup: Sendable, Codable {
        /// The question (`isbn:978…`, `title:<key>|author:<key>`).
        public var question: String
        /// The source that answered; null when no answer is cached.
        public var source: String?
        /// `found`, `notFound`, or `no answer cached (not asked, or asked of the local catalogue, whose answers are not cached)`.
        public var outcome: String
        /// Candidates in the answer.
        public var candidates: Int
        /// When the answer was fetched (ISO 8601).
        public var fetchedAt: String?
    }

    /// A lookup's outcome when no answer is cached for its question.
    static let noCachedAnswer = "no answer cached (not asked, or asked of the local catalogue, whose answers are not cached)"

    /// Reads the story of record `id`.
    /// - Returns: nil when no record has this id.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public static func load(id: String, from store: any Library) async throws(StoreError) -> RecordStory? {
        guard let record = try await store.records(ids: [id]).first else { return nil }
        let header = try await store.sourceFile(hash: record.origin.fileHash)?.header ?? []
        let rawFields = record.origin.rawFields
        let raw = rawFields.enumerated().map { index, value in
            Field(column: index < header.count ? header[index] : "column \(index + 1)", value: value)
        }
        var questions: [String] = []
        for isbn in record.normalized?.allISBN13s ?? [] { questions.append("isbn:\(isbn)") }
        let searchTitle = record.normalized?.searchTitle ?? record.title
        let author = record.normalized?.authors.first ?? record.authors.first.map(AuthorNormalizer.displayName)
        for title in Set([searchTitle, record.normalized?.mainTitle ?? searchTitle]).sorted() where !title.isEmpty {
            questions.append("title:\(TextFolding.key(title))|author:\(author.map(AuthorNormalizer.key) ?? "")")
        }
        let cached = try await store.cachedLookups(questions: questions)
        let formatter = ISO8601DateFormatter()
        var lookups: [Lookup] = []
        for question in questions {
            let answers = cached.filter { $0.question == question }
            if answers.isEmpty {
                lookups.append(Lookup(question: question, source: nil, outcome: Self.noCachedAnswer, candidates: 0, fetchedAt: nil))
            }
            for answer in answers {
                let parsed = (try? JSONSerialization.jsonObject(with: Data(answer.answerJSON.utf8))) as? [String: Any]
                let outcome = parsed?.keys.sorted().first ?? "unknown"
                var count = 0
                if let found = parsed?["found"] as? [String: Any], let list = found["_0"] as? [Any] { count = list.count }
                lookups.append(Lookup(question: question, source: answer.source, outcome: outcome, candidates: count,
                                      fetchedAt: formatter.string(from: answer.fetchedAt)))
            }
        }
        // Review decisions from the review log, oldest first: "<when> <action>: <fields after>".
        let history = try await store.reviewActions(recordID: id)?.map { action in
            "\(formatter.string(from: action.at)) \(action.action): " + Self.change(before: action.before, after: action.after)
        }
        // The report's duplicate findings for this record: the other records with its ISBN-13, its
        // matched work, or its normalised title and first author (as the report groups them).
        let duplicates = try await store.duplicates(ofRecord: id).map { found in
            Duplicate(kind: Self.duplicateKindName(found.kind), records: found.recordIDs)
        }
        // The change log (re-enrichment, edits that made the lookup stale).
        let changes = try await store.recordChanges(recordID: record.id).map { change in
            let detail = [change.kind?.rawValue, change.source.map { "from \($0)" }].compactMap { $0 }.joined(separator: ", ")
            return "\(formatter.string(from: change.changedAt)) \(change.field): \(change.old ?? "none") → \(change.new ?? "none")"
                + (detail.isEmpty ? "" : " (\(detail))")
        }
        // The export's provenance, so `show` and `export` tell the same story.
        let editedByPerson = try await store.personEditedFields()[record.id] ?? []
        var provenance: [String: String] = [:]
        for (field, supplier) in LibraryExport.provenance(of: record, editedByPerson: editedByPerson) {
            provenance[field] = supplier
        }
        return RecordStory(
            id: record.id,
            source: Source(file: record.origin.file, fileHash: record.origin.fileHash, row: record.origin.row,
                           line: record.origin.line, format: record.origin.format, scan: record.origin.scan),
            raw: raw,
            read: Read(title: record.title, authors: record.authors, isbns: record.rawISBNs, year: record.year,
                       publisher: record.publisher, pages: record.pageCount, shelf: record.shelf, rating: record.rating,
                       dateAdded: record.dateAdded, dateRead: record.dateRead, binding: record.binding,
                       review: record.review, tags: record.tags),
            normalized: record.normalized, status: record.status.rawValue, failure: record.enrichment?.failure,
            reviewStatus: LibraryExport.reviewStatus(of: record)?.rawValue ?? "notRouted", findings: record.findings,
            duplicates: duplicates, lookups: lookups,
            candidates: record.enrichment?.candidates ?? [], match: record.enrichment?.match, detection: record.scan,
            reviewHistory: history, changes: changes, provenance: provenance,
            entry: record.listEntry.map { entry in
                Entry(list: String(ListIdentity.list(ofEntry: entry)),
                      key: String(entry.dropFirst(ListIdentity.list(ofEntry: entry).count + 1)))
            },
            sameBook: try await sameBook(as: record.id, in: store))
    }

    /// The other records of the record's book, with why.
    static func sameBook(as id: String, in store: any Library) async throws(StoreError) -> [BookPeer] {
        let members = try await store.bookMembers()
        guard members.contains(where: { $0.recordID == id }) else { return [] }
        let decisions = try await store.linkDecisions()
        guard let book = BookGrouping.books(members, decisions: decisions).first(where: { $0.contains(id) }),
              book.count > 1 else { return [] }
        let links = BookGrouping.links(members, decisions: decisions)
        let lists = Dictionary(members.map { ($0.recordID, $0.list) }, uniquingKeysWith: { first, _ in first })
        return book.filter { $0 != id }.map { other in
            BookPeer(record: other, list: lists[other] ?? nil,
                     reason: links[LinkDecision(id, other, linked: true)]?.description ?? "through another record of the book")
        }
    }

    /// What a review action changed, from the fields before and after it (JSON objects):
    /// `title "THE ROAD" → "The Road"; authors …`, or `no change` (a verify).
    static func change(before: String?, after: String?) -> String {
        func object(_ text: String?) -> [String: Any] {
            text.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] } ?? [:]
        }
        func show(_ value: Any?) -> String {
            switch value {
            case let text as String: return "\"\(text)\""
            case let list as [Any]: return list.isEmpty ? "none" : list.map { show($0) }.joined(separator: "; ")
            case let number as NSNumber: return number.stringValue
            case nil, is NSNull: return "none"
            case let other?: return "\(other)"
            }
        }
        let old = object(before), new = object(after)
        let changed = Set(old.keys).union(new.keys).sorted().filter { show(old[$0]) != show(new[$0]) }
        return changed.isEmpty ? "no change" : changed.map { "\($0) \(show(old[$0])) → \(show(new[$0]))" }.joined(separator: "; ")
    }

    /// How `show` names a kind of duplicate.
    static func duplicateKindName(_ kind: DuplicateKind) -> String {
        switch kind {
        case .sameISBN13: "same ISBN-13"
        case .sameWork: "same work"
        case .sameTitleAndFirstAuthor: "same normalised title and first author"
        }
    }

    /// The story as one line of JSON (sorted keys), as `show --json` prints it.
    /// - Throws: `EncodingError` for a non-finite number.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// The story for a terminal.
    public var text: String {
        var lines = ["\(id)  \(status)  review: \(reviewStatus)"]
        lines.append("read from \(source.file):\(source.line) (row \(source.row), \(source.format)\(source.scan.map { ", scan \($0)" } ?? ""))")
        if let entry { lines.append("entry \(entry.key) of the list \"\(entry.list)\" (a newer export of the list updates this record)") }
        lines.append("")
        lines.append("row as read:")
        for field in raw where !field.value.isEmpty { lines.append("  \(field.column): \(field.value)") }
        lines.append("")
        lines.append("values: title \"\(read.title)\"; authors \(read.authors.joined(separator: "; ")); ISBNs \(read.isbns.joined(separator: " "))"
            + (read.year.map { "; year \($0)" } ?? "") + (read.pages.map { "; \($0) pages" } ?? ""))
        if let detection {
            lines.append("scan detection: confidence " + (detection.confidence.map { String($0) } ?? "not given")
                + (detection.boundingBox.map { box in ", box x \(box.x) y \(box.y) width \(box.width) height \(box.height)" } ?? "")
                + (detection.photoPath.map { ", photo \($0)" } ?? ""))
        }
        if let normalized {
            lines.append("normalised: search title \"\(normalized.searchTitle)\", key \"\(normalized.titleKey)\", authors "
                + normalized.authors.joined(separator: "; ") + ", ISBN-13 " + (normalized.isbn13 ?? "none")
                + (normalized.series.map { ", series \($0) #\(normalized.seriesNumber ?? "?")" } ?? ""))
        }
        lines.append("")
        lines.append(findings.isEmpty ? "findings: none" : "findings:")
        for finding in findings { lines.append("  \(finding.severity.rawValue) \(finding.code): \(finding.message)") }
        lines.append("same book: " + (sameBook.isEmpty ? "none" : sameBook.map { peer in
            "\(peer.record)" + (peer.list.map { " (\($0))" } ?? "") + " — \(peer.reason)"
        }.joined(separator: "; ")))
        lines.append("duplicates: " + (duplicates.isEmpty ? "none" : duplicates.map {
            "\($0.kind) as \($0.records.prefix(10).joined(separator: " "))" + ($0.records.count > 10 ? " +\($0.records.count - 10)" : "")
        }.joined(separator: "; ")))
        lines.append("lookups:")
        for lookup in lookups {
            lines.append("  \(lookup.question) → " + (lookup.source.map { "\($0): \(lookup.outcome)" } ?? lookup.outcome)
                + (lookup.candidates > 0 ? " (\(lookup.candidates) candidates)" : "") + (lookup.fetchedAt.map { ", \($0)" } ?? ""))
        }
        if !candidates.isEmpty {
            lines.append("candidates:")
            for candidate in candidates {
                let breakdown = candidate.breakdown.sorted { $0.key < $1.key }.map { "\($0.key) +\($0.value)" }.joined(separator: ", ")
                lines.append("  \(candidate.score)  \(candidate.title) — \(candidate.authors.joined(separator: "; ")) [\(candidate.identity), \(candidate.source)] (\(breakdown))")
            }
        }
        if let match {
            lines.append("match: \(match.title) — \(match.authors.joined(separator: "; ")) [\(match.identity)] score \(match.score) from \(match.source)")
        } else if let failure {
            lines.append("failure: \(failure)")
        }
        lines.append("review history: " + (reviewHistory.map { $0.isEmpty ? "none" : $0.joined(separator: "; ") } ?? "not recorded by this library"))
        lines.append(changes.isEmpty ? "changes: none" : "changes:")
        for change in changes { lines.append("  \(change)") }
        lines.append("provenance: " + provenance.sorted { $0.key < $1.key }.map { "\($0.key) ← \($0.value)" }.joined(separator: ", "))
        // Data may hold control characters and bidirectional overrides: shown as escapes, never acted on.
        return lines.map(TerminalText.inert).joined(separator: "\n")
    }
}
