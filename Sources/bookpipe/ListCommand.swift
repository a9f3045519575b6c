import ArgumentParser
import BookpipeCore
import BookpipeLibrary
import BookpipeStore
import Foundation

/// `bookpipe list [QUERY…]`: the records a query matches, beets- and calibredb-style.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Lists the records a query matches (field queries and words); exits 1 when none does.",
        discussion: """
            Query: every token must hold. A word matches the start of a word of the title or an author \
            (case and accents aside); field:value tests one field, for example title:dune, author:herbert, \
            isbn:978044, year:1965, year:1960..1970, year:>=1960, shelf:to-read, status:notFound, review:waiting, \
            rating:>=4, rating:3..5, file:goodreads, gone:yes.
            ^ before a token negates it (^shelf:read). Quote a value with spaces: "title:the left hand".
            Statuses: \(RecordStatus.allCases.map(\.rawValue).joined(separator: ", ")). \
            Review: waiting (in the review queue), verified, needsReview, userEdited. \
            gone:yes — the newest export of the record's list no longer holds it.
            Records of several lists that are one book (the same ISBN-13 or matched edition, or linked \
            with `bookpipe link`) share a `book` (the id of the book's first record); --books prints each \
            book once, and the count says how many books the records are.
            Each record has a number (first column): `bookpipe show 12`, `bookpipe remove 12`. \
            Fields for --format, --fields and --sort: \(ListingTemplate.fields.joined(separator: ", ")) \
            (sort: \(ListingOrder.Field.allCases.map(\.rawValue).joined(separator: ", "))).
            The first listing of a large library builds its listing (seconds per million records); later ones are fast.
            """)

    @Argument(help: "Field queries (author:herbert year:1960..1970) and words; none lists every record.")
    var query: [String] = []

    @Option(help: "Print each record with this template, e.g. '{title} — {authors} ({year})'.")
    var format: String?

    @Option(help: "Print these fields, separated by commas (e.g. number,title,year).")
    var fields: String?

    @Option(help: "Sort by these fields, separated by commas; a final - sorts descending (year-,title).")
    var sort: String?

    @Option(help: "The most records printed.")
    var limit: Int?

    @Flag(help: "One JSON object per line.")
    var json = false

    @Flag(help: "Each book once: a record of a book already printed (the same book from another list) is left out.")
    var books = false

    @OptionGroup var library: LibraryOptions

    func validate() throws {
        if format != nil, fields != nil { throw ValidationError("Give --format or --fields, not both.") }
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more, not \(limit).") }
        _ = try parsed()
    }

    /// The query, order and template, or a usage error naming the token.
    func parsed() throws -> (query: LibraryQuery, order: [ListingOrder], template: ListingTemplate) {
        do {
            let template: ListingTemplate
            if let format {
                template = try ListingTemplate(format)
            } else if let fields {
                template = try ListingTemplate.columns(fields)
            } else {
                template = try ListingTemplate(ListingTemplate.standard)
            }
            return (try LibraryQuery.parse(query), try sort.map(ListingOrder.parse) ?? [], template)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let (query, order, template) = try parsed()
        let store = try await openListingOfEitherEngine(library, for: query)
        var count = 0
        var printedBooks = Set<String>()
        var matchedBooks = Set<String>()
        do {
            // Which book each record is: records of several lists that are one book share the first one's id.
            var bookOf: [String: String] = [:]
            for book in BookGrouping.books(try await store.bookMembers(), decisions: try await store.linkDecisions())
            where book.count > 1 {
                for id in book { bookOf[id] = book[0] }
            }
            try await store.listRecords(query, order: order, limit: limit) { listed in
                var listed = listed
                listed.book = bookOf[listed.record.id] ?? listed.record.id
                let book = listed.book ?? listed.record.id
                matchedBooks.insert(book)
                if books, !printedBooks.insert(book).inserted { return }
                count += 1
                if json {
                    print(try ListingOutput.jsonLine(listed, fields: fields == nil && format == nil ? nil : template.fieldNames))
                } else {
                    print(TerminalText.inert(template.render(listed)))
                }
            }
        } catch {
            printError("\(error)")
            try? await store.close()
            throw ExitCode(1)
        }
        try? await store.close()
        if count == 0 {
            printError(query.isEmpty ? "\(library.libraryPath) holds no record." : "no record matches \"\(self.query.joined(separator: " "))\"")
            throw ExitCode(1)
        }
        // A book counts once: said when the listed records are fewer books than records.
        if books {
            printError("\(matchedBooks.count) book\(matchedBooks.count == 1 ? "" : "s")")
        } else if matchedBooks.count < count {
            printError("\(count) records, \(matchedBooks.count) book\(matchedBooks.count == 1 ? "" : "s") (records of several lists "
                       + "that are one book count once; --books lists each book once)")
        }
    }
}

/// What `list` and `remove` share: opening a library for a listing, and printing a listed record.
enum ListingOutput {
    /// A listed record as one JSON line: every field of ``ListingTemplate/fields`` the record has
    /// (or only `fields`), keys sorted.
    static func jsonLine(_ listed: ListedRecord, fields: [String]?) throws -> String {
        var object: [String: Any] = [:]
        for field in fields ?? ListingTemplate.fields {
            if let value = ListingTemplate.value(field, of: listed) { object[field] = value }
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}

/// Opens an existing library of either engine for a listing of `query` (a PostgreSQL library
/// brings its listing up to date in the listing's own call).
func openListingOfEitherEngine(_ options: LibraryOptions, for query: LibraryQuery) async throws -> any Library {
    guard LibraryLocation.isServer(options.libraryPath) else { return try await openListing(options, for: query) }
    return try openExistingAnyLibrary(options)
}

/// Opens an existing library for a listing of `query`: for reading only when what it reads is current (and
/// `forWriting` is false), else for writing (the listing is brought up to date first). No
/// library: says so and exits 1.
func openListing(_ options: LibraryOptions, for query: LibraryQuery, forWriting: Bool = false) async throws -> LibraryStore {
    let store = try openExistingLibrary(options)
    do {
        if !forWriting, try store.listingIsCurrent(), try !query.hasWords || store.searchIndexIsCurrent() { return store }
        try? await store.close()
        return try LibraryStore(path: options.libraryPath)
    } catch {
        printError("\(error)")
        throw ExitCode(1)
    }
}
