import BookpipeLibrary

/// Duplicates counted between books, not records: records that are one book (issue 22's
/// ``BookGrouping``: entries of different lists with one ISBN-13 or matched edition, or linked by a
/// person) count once; books that share an ISBN-13, a matched work, or a normalised title and first
/// author are joined into one group, which keeps every reason.
enum DuplicateBooks {
    /// One group of books that are probably one book held more than once.
    struct Group {
        /// The records of the group's books that share a value, in library order.
        var members: [RecordPlace]
        /// How many books.
        var books: Int
        /// What they share, in the order of the library's groups (by kind, largest first).
        var reasons: [(kind: DuplicateKind, value: String)]
    }

    /// The groups, counts of books and records in them, and groups per reason.
    struct Result {
        var groups: [Group]
        var books: Int
        var records: Int
        var byReason: [DuplicateKind: Int]
    }

    /// Groups the library's shared values (``QualityFigures/duplicateGroups``) into duplicate groups
    /// of books. `bookOf` names the book (its first record's id) of each record that is one book
    /// with others, `listOf` those records' lists; any other record is a book of its own. A shared
    /// value is a duplicate when its records are two books or more, or when one book holds two of
    /// them from one list (a list that holds a book twice); records of one book from different
    /// lists are no duplicate.
    static func group(_ shared: [QualityFigures.DuplicateGroup], bookOf: [String: String],
                      listOf: [String: String] = [:]) -> Result {
        func book(_ id: String) -> String { bookOf[id] ?? id }
        func heldTwiceByOneList(_ members: [RecordPlace]) -> Bool {
            var seen = Set<String>()
            for member in members {
                guard let bookID = bookOf[member.id], let list = listOf[member.id] else { continue }
                if !seen.insert(bookID + "\u{1F}" + list).inserted { return true }
            }
            return false
        }
        // The books that share a value are one duplicate group.
        var groups = IDGroups()
        var kept: [QualityFigures.DuplicateGroup] = []
        for group in shared {
            let books = Set(group.members.map { book($0.id) })
            guard books.count > 1 || heldTwiceByOneList(group.members) else { continue }
            kept.append(group)
            let sorted = books.sorted()
            groups.add(sorted[0])
            for other in sorted.dropFirst() { groups.join(sorted[0], other) }
        }
        // Collect each group's records (once each) and reasons, in the order the library gave them.
        var order: [String] = []
        var members: [String: [RecordPlace]] = [:], seen: [String: Set<String>] = [:]
        var reasons: [String: [(kind: DuplicateKind, value: String)]] = [:]
        var booksOf: [String: Set<String>] = [:]
        for group in kept {
            let key = groups.root(of: book(group.members[0].id))
            if members[key] == nil { order.append(key) }
            reasons[key, default: []].append((group.kind, group.value))
            for member in group.members where seen[key, default: []].insert(member.id).inserted {
                members[key, default: []].append(member)
                booksOf[key, default: []].insert(book(member.id))
            }
        }
        var result = Result(groups: [], books: 0, records: 0, byReason: [:])
        for key in order {
            let records = (members[key] ?? []).sorted { ($0.file, $0.line, $0.id) < ($1.file, $1.line, $1.id) }
            let group = Group(members: records, books: booksOf[key]?.count ?? 0, reasons: reasons[key] ?? [])
            result.groups.append(group)
            result.books += group.books
            result.records += records.count
            for kind in Set(group.reasons.map(\.kind)) { result.byReason[kind, default: 0] += 1 }
        }
        return result
    }
}
