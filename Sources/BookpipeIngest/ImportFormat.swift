/// How a cell with ISBNs is laid out.
enum ISBNCellStyle: Sendable {
    /// One value, kept exactly as read (`="0439023483"`, `[2070291340]`).
    case single
    /// Several values joined by a separator (`2070291340, 9782070291342`).
    case list(separator: String)
    /// Typed identifiers; only the values after the prefix are ISBNs (`goodreads:1,isbn:978…`).
    case prefixed(prefix: String, separator: String)
}

/// Which header names feed which record field, for one format.
struct ColumnSpec: Sendable {
    var title: [String] = []
    /// Author columns in order; `split` cuts a cell holding several authors.
    var authors: [(names: [String], split: String?)] = []
    var isbns: [(names: [String], style: ISBNCellStyle)] = []
    /// Year columns in order of preference.
    var years: [[String]] = []
    var publisher: [String] = []
    var pages: [String] = []
    var shelf: [String] = []
    var rating: [String] = []
    var dateAdded: [String] = []
    var dateRead: [String] = []
    var binding: [String] = []
    var review: [String] = []
    /// Tag columns; `split` cuts a cell holding several tags.
    var tags: (names: [String], split: String?) = ([], nil)
}

/// Column indices resolved against one file's header.
struct FieldMap: Sendable {
    var title: Int?
    var authors: [(index: Int, split: String?)] = []
    var isbns: [(index: Int, style: ISBNCellStyle)] = []
    var years: [Int] = []
    var publisher: Int?
    var pages: Int?
    var shelf: Int?
    var rating: Int?
    var dateAdded: Int?
    var dateRead: Int?
    var binding: Int?
    var review: Int?
    var tags: (index: Int, split: String?)?
    /// Columns that make a row usable when the format has no title (Open Library's Work Id).
    var keys: [Int] = []

    /// Canonical text of the map, for ``DetectedFormat/reading``: `goodreads;title=1;authors=2,3/", ";…`
    /// (0-based columns; unset values left out).
    func reading(format: String) -> String {
        func one(_ name: String, _ index: Int?) -> String? { index.map { "\(name)=\($0)" } }
        func many(_ name: String, _ indexes: [String]) -> String? {
            indexes.isEmpty ? nil : "\(name)=" + indexes.joined(separator: ",")
        }
        let parts: [String?] = [
            format,
            one("title", title),
            many("authors", authors.map { author in author.split.map { "\(author.index)/\"\($0)\"" } ?? "\(author.index)" }),
            many("isbns", isbns.map { "\($0.index)/\($0.style)" }),
            many("years", years.map(String.init)),
            one("publisher", publisher), one("pages", pages), one("shelf", shelf), one("rating", rating),
            one("added", dateAdded), one("read", dateRead),
            one("binding", binding), one("review", review),
            tags.map { tags in "tags=" + (tags.split.map { "\(tags.index)/\"\($0)\"" } ?? "\(tags.index)") },
            many("keys", keys.map(String.init)),
        ]
        return parts.compactMap { $0 }.joined(separator: ";")
    }
}

/// A known export format: how to recognise its header and read its columns.
struct ImportFormat: Sendable {
    let name: String
    /// Header names that must all be present (ignoring case and spaces) to detect it.
    let signature: [String]
    let columns: ColumnSpec
    /// Columns standing in for a title when the format has none.
    let keyColumns: [String]
    /// Describes the detected file for people.
    let describe: @Sendable (_ header: [String], _ delimiter: UInt8) -> String

    static let goodreads = ImportFormat(
        name: "goodreads",
        signature: ["Book Id", "Title", "Author", "Exclusive Shelf"],
        columns: ColumnSpec(
            title: ["Title"],
            authors: [(["Author"], nil), (["Additional Authors"], ", ")],
            isbns: [(["ISBN"], .single), (["ISBN13"], .single)],
            years: [["Original Publication Year"], ["Year Published"]],
            publisher: ["Publisher"], pages: ["Number of Pages"], shelf: ["Exclusive Shelf"],
            rating: ["My Rating"], dateAdded: ["Date Added"], dateRead: ["Date Read"], binding: ["Binding"],
            review: ["My Review"], tags: (["Bookshelves"], ",")),
        keyColumns: [],
        describe: { header, _ in "Goodreads library export (\(header.count)-column header)" })

    static let storygraph = ImportFormat(
        name: "storygraph",
        signature: ["Title", "Authors", "ISBN/UID", "Read Status"],
        columns: ColumnSpec(
            title: ["Title"], authors: [(["Authors"], ", ")], isbns: [(["ISBN/UID"], .single)],
            shelf: ["Read Status"], rating: ["Star Rating"], dateAdded: ["Date Added"],
            dateRead: ["Last Date Read"], binding: ["Format"], review: ["Review"], tags: (["Tags"], ",")),
        keyColumns: [],
        describe: { header, _ in "StoryGraph export (\(header.count) columns)" })

    static let librarything = ImportFormat(
        name: "librarything",
        signature: ["Book Id", "Title", "Primary Author"],
        columns: ColumnSpec(
            title: ["Title"],
            authors: [(["Primary Author"], nil), (["Secondary Author"], "|")],
            isbns: [(["ISBN"], .single), (["ISBNs"], .list(separator: ","))],
            years: [["Date"]], publisher: ["Publication"], pages: ["Page Count"],
            shelf: ["Collections"], rating: ["Rating"], dateAdded: ["Entry Date", "Acquired"],
            dateRead: ["Date Read"], binding: ["Media"], review: ["Review"], tags: (["Tags"], ",")),
        keyColumns: [],
        describe: { header, delimiter in
            let kind = delimiter == UInt8(ascii: "\t") ? "tab-separated" : "\(IngestError.delimiterName(delimiter))-separated"
            return "LibraryThing export (\(kind), \(header.count) columns)"
        })

    static let calibre = ImportFormat(
        name: "calibre",
        signature: ["title", "authors", "author_sort", "identifiers"],
        columns: ColumnSpec(
            title: ["title"], authors: [(["authors"], " & ")],
            isbns: [(["isbn"], .single), (["identifiers"], .prefixed(prefix: "isbn:", separator: ","))],
            years: [["pubdate"]], publisher: ["publisher"], rating: ["rating"], dateAdded: ["timestamp"],
            binding: ["formats"], tags: (["tags"], ",")),
        keyColumns: [],
        describe: { header, _ in "Calibre CSV catalogue (\(header.count) columns)" })

    static let openLibraryReadingLog = ImportFormat(
        name: "openlibrary-reading-log",
        signature: ["Work Id", "Edition Id", "Bookshelf"],
        columns: ColumnSpec(shelf: ["Bookshelf"]),
        keyColumns: ["Work Id", "Edition Id"],
        describe: { _, _ in "Open Library reading log export (no titles: looked up by Work Id)" })

    static let openreads = ImportFormat(
        name: "openreads",
        signature: ["title", "author", "status", "olid"],
        columns: ColumnSpec(
            title: ["title"], authors: [(["author"], nil)], isbns: [(["isbn"], .single)],
            years: [["publication_year"]], pages: ["pages"], shelf: ["status"], rating: ["rating"],
            dateAdded: ["date_added"], binding: ["book_format"], review: ["my_review"], tags: (["tags"], ",")),
        keyColumns: [],
        describe: { header, _ in "OpenReads export (\(header.count) columns)" })

    static let bookwyrm = ImportFormat(
        name: "bookwyrm",
        signature: ["title", "author_text", "remote_id"],
        columns: ColumnSpec(
            title: ["title"], authors: [(["author_text"], nil)],
            isbns: [(["isbn_10"], .single), (["isbn_13"], .single)],
            shelf: ["shelf"], rating: ["rating"], dateAdded: ["shelf_date"], dateRead: ["finish_date"],
            review: ["review_content"]),
        keyColumns: [],
        describe: { header, _ in "BookWyrm export (\(header.count) columns)" })

    /// Known formats in detection order (most specific first); `generic` is handled apart.
    static let known: [ImportFormat] = [
        openLibraryReadingLog, goodreads, librarything, storygraph, calibre, openreads, bookwyrm,
    ]

    /// Generic files: header synonyms in several languages, compared after ``GenericHeaders/normalise(_:)``.
    static let genericColumns = ColumnSpec(
        title: [
            "title", "book title", "titel", "buchtitel", "titre", "título", "titulo", "titolo", "tytuł",
            "titel boek", "titul", "название", "заглавие", "书名", "書名", "标题", "標題", "タイトル", "제목", "name",
        ],
        authors: [(
            [
                "author", "authors", "author(s)", "author name", "author text", "autor", "autoren", "autor(en)",
                "verfasser", "auteur", "auteurs", "autore", "autori", "autores", "writer", "schrijver",
                "författare", "forfatter", "автор", "作者", "著者", "저자",
            ], nil
        )],
        isbns: [(
            [
                "isbn", "isbn13", "isbn 13", "isbn10", "isbn 10", "isbns", "isbn/uid", "ean", "ean13",
                "isbn/ean",
            ], .single
        )],
        years: [[
            "year", "original publication year", "publication year", "year published", "published", "pub year",
            "jahr", "erscheinungsjahr", "année", "annee", "año", "anno", "rok", "год",
        ]],
        publisher: ["publisher", "verlag", "éditeur", "editeur", "editorial", "editore", "uitgever", "издательство"],
        pages: ["pages", "page count", "number of pages", "num pages", "seiten", "seitenzahl"],
        shelf: ["shelf", "exclusive shelf", "status", "read status", "bookshelf", "regal", "étagère"],
        rating: ["rating", "my rating", "stars", "star rating", "bewertung", "note"],
        dateAdded: ["added", "date added", "added on", "hinzugefügt"],
        dateRead: ["finished", "date read", "read", "date finished", "finished on", "gelesen", "gelesen am"],
        binding: ["binding", "format", "media", "einband", "reliure"],
        review: ["review", "my review", "rezension", "critique"],
        tags: (["tags", "bookshelves", "shelves", "schlagwörter"], ","))
}

/// Header names as used for matching: trimmed, duplicates renamed `Name#2`, `Name#3`, ….
struct MatchingHeader {
    let names: [String]
    /// ``names`` lower-cased and without spaces (``folded(_:)``).
    let foldedNames: [String]
    /// One note per renamed duplicate.
    let repairs: [String]

    init(_ header: [String]) {
        var seen: [String: Int] = [:]
        var names: [String] = []
        var repairs: [String] = []
        names.reserveCapacity(header.count)
        for (index, raw) in header.enumerated() {
            let name = raw.trimmingSpaces
            let count = (seen[name] ?? 0) + 1
            seen[name] = count
            if count == 1 {
                names.append(name)
            } else {
                let renamed = "\(name)#\(count)"
                names.append(renamed)
                repairs.append(
                    "column \(index + 1) repeats the header \"\(name)\"; both columns are kept, "
                        + "the repeat is matched as \"\(renamed)\"")
            }
        }
        self.names = names
        self.foldedNames = names.map(Self.folded)
        self.repairs = repairs
    }

    /// Index of the first header equal to one of `candidates` (exact, then ignoring case and
    /// spaces: `Book ID` is `Book Id`, `ISBN 13` is `ISBN13`).
    func index(of candidates: [String]) -> Int? {
        for candidate in candidates {
            if let found = names.firstIndex(of: candidate) { return found }
        }
        for candidate in candidates {
            let key = Self.folded(candidate)
            if let found = foldedNames.firstIndex(of: key) { return found }
        }
        return nil
    }

    /// A header name for comparing: lower-cased, without spaces or tabs.
    static func folded(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != " " && $0 != "\t" && $0 != "\u{A0}" }.map(Character.init))
    }

    /// Index of the first header whose generic form is one of `candidates` (already normalised).
    func genericIndex(of candidates: [String], excluding used: Set<Int> = []) -> Int? {
        let normalised = names.map(GenericHeaders.normalise)
        for candidate in candidates {
            if let found = normalised.indices.first(where: { normalised[$0] == candidate && !used.contains($0) }) {
                return found
            }
        }
        return nil
    }

    /// A header name without the `#2` a repeat got.
    static func baseName(_ name: String) -> String {
        guard let hash = name.lastIndex(of: "#"), hash != name.startIndex,
            name[name.index(after: hash)...].allSatisfy(\.isNumber), name.index(after: hash) != name.endIndex
        else { return name }
        return String(name[..<hash])
    }

    /// True when every required header is there, ignoring case and spaces.
    func contains(all required: [String]) -> Bool { required.allSatisfy { foldedNames.contains(Self.folded($0)) } }

    /// Resolves a format's columns against this header.
    func resolve(_ spec: ColumnSpec, keys: [String] = [], generic: Bool = false) -> FieldMap {
        func find(_ candidates: [String]) -> Int? {
            generic ? genericIndex(of: candidates.map(GenericHeaders.normalise)) : index(of: candidates)
        }
        var map = FieldMap()
        map.title = find(spec.title)
        map.authors = spec.authors.compactMap { column in find(column.names).map { ($0, column.split) } }
        if generic {
            // Every ISBN-like column counts (a file may have ISBN and ISBN13).
            let wanted = Set(spec.isbns.flatMap(\.names).map(GenericHeaders.normalise))
            for (index, name) in names.enumerated() where wanted.contains(GenericHeaders.normalise(Self.baseName(name))) {
                map.isbns.append((index, .single))
            }
        } else {
            map.isbns = spec.isbns.compactMap { column in find(column.names).map { ($0, column.style) } }
        }
        map.years = spec.years.compactMap(find)
        map.publisher = find(spec.publisher)
        map.pages = find(spec.pages)
        map.shelf = find(spec.shelf)
        map.rating = find(spec.rating)
        map.dateAdded = find(spec.dateAdded)
        map.dateRead = find(spec.dateRead)
        map.binding = find(spec.binding)
        map.review = find(spec.review)
        map.tags = find(spec.tags.names).map { ($0, spec.tags.split) }
        map.keys = keys.compactMap { index(of: [$0]) }
        return map
    }
}

/// Header normalisation for generic files.
enum GenericHeaders {
    /// Lower-cased, `_` `-` `.` as spaces, runs of spaces collapsed, trailing `:` dropped.
    static func normalise(_ header: String) -> String {
        var text = header.lowercased()
        text = String(text.map { $0 == "_" || $0 == "-" || $0 == "." ? " " : $0 })
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" })
        var joined = words.joined(separator: " ")
        while joined.hasSuffix(":") { joined.removeLast() }
        return joined
    }
}

@inline(__always)
func isSpaceByte(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}

extension String {
    /// The string without leading and trailing ASCII spaces, tabs and line breaks (byte-level, so
    /// it is cheap on the per-row path).
    var trimmingSpaces: String {
        let utf8 = self.utf8
        guard let first = utf8.first, let last = utf8.last else { return self }
        if !isSpaceByte(first) && !isSpaceByte(last) { return self }
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end && isSpaceByte(utf8[start]) { start = utf8.index(after: start) }
        while end > start && isSpaceByte(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return String(self[start..<end])
    }

    /// True when the string has a character other than ASCII spaces, tabs and line breaks.
    var hasNonSpace: Bool { utf8.contains { !isSpaceByte($0) } }

    /// The parts between occurrences of `separator` (compared byte for byte), trimmed, empty
    /// parts dropped.
    func splitTrimmed(by separator: String) -> [String] {
        let separatorBytes = Array(separator.utf8)
        var text = self
        return text.withUTF8 { bytes -> [String] in
            var parts: [String] = []
            var partStart = 0
            var index = 0
            let count = bytes.count
            let width = separatorBytes.count
            func flush(_ end: Int) {
                let part = String(decoding: UnsafeBufferPointer(rebasing: bytes[partStart..<end]), as: UTF8.self)
                    .trimmingSpaces
                if !part.isEmpty { parts.append(part) }
            }
            while index + width <= count {
                var matches = true
                for offset in 0..<width where bytes[index + offset] != separatorBytes[offset] {
                    matches = false
                    break
                }
                if matches {
                    flush(index)
                    index += width
                    partStart = index
                } else {
                    index += 1
                }
            }
            flush(count)
            return parts
        }
    }
}
