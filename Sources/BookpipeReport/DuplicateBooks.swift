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
    ///
    /// Memory: a group that shares no book with another keeps the library's array of its records
    /// (no copy); only the book → first group table spans the library (``IDGroups`` joins the groups
    /// that share a book, named by their index).
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
        // Without books of several records, a group's records are its books (a value's records are
        // distinct), so every group is kept.
        let recordsAreBooks = bookOf.isEmpty
        func books(_ members: [RecordPlace]) -> Int {
            recordsAreBooks ? members.count : Set(members.map { book($0.id) }).count
        }
        // The groups whose records are two books or more (or a list's book twice); groups that share
        // a book are joined.
        var kept: [Int] = []
        var firstGroup: [String: Int] = [:]
        var joins = IDGroups()
        for (index, group) in shared.enumerated() {
            guard books(group.members) > 1 || heldTwiceByOneList(group.members) else { continue }
            kept.append(index)
            for member in group.members {
                let bookID = book(member.id)
                if let other = firstGroup[bookID] {
                    if other != index { joins.join(name(other), name(index)) }
                } else {
                    firstGroup[bookID] = index
                }
            }
        }
        firstGroup = [:]
        // Collect each joined group's records (once each) and reasons, in the order the library gave them.
        var order: [Int] = []
        var parts: [Int: [Int]] = [:]
        for index in kept {
            let root = joins.ids.isEmpty ? index : Int(joins.root(of: name(index)).dropFirst()) ?? index
            if parts[root] == nil { order.append(root) }
            parts[root, default: []].append(index)
        }
        var result = Result(groups: [], books: 0, records: 0, byReason: [:])
        result.groups.reserveCapacity(order.count)
        for root in order {
            let indices = parts[root] ?? []
            var members: [RecordPlace]
            if indices.count == 1 {
                members = shared[indices[0]].members
            } else {
                var seen = Set<String>()
                members = indices.flatMap { shared[$0].members }.filter { seen.insert($0.id).inserted }
            }
            if !isInPlaceOrder(members) { members.sort(by: inPlaceOrder) }
            let group = Group(members: members, books: books(members),
                              reasons: indices.map { (shared[$0].kind, shared[$0].value) })
            result.groups.append(group)
            result.books += group.books
            result.records += members.count
            for kind in Set(group.reasons.map(\.kind)) { result.byReason[kind, default: 0] += 1 }
        }
        return result
    }

    /// A group's name in ``IDGroups``: `g` and its index (short enough to need no storage of its own).
    private static func name(_ index: Int) -> String { "g\(index)" }

    /// The order of a group's records: by file, line, then id.
    private static func inPlaceOrder(_ a: RecordPlace, _ b: RecordPlace) -> Bool {
        (a.file, a.line, a.id) < (b.file, b.line, b.id)
    }

    private static func isInPlaceOrder(_ members: [RecordPlace]) -> Bool {
        zip(members, members.dropFirst()).allSatisfy { !inPlaceOrder($1, $0) }
    }
}
