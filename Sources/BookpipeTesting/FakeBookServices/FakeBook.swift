import BookpipeCore

/// One book (an edition of a work) that ``FakeBookServices`` knows.
///
/// Open Library sees it as an edition (`editionKey`) of a work (`workKey`); several books may
/// share a work key, and `search.json` then answers one document for the work. Google Books
/// sees it as the volume `googleVolumeID`.
///
/// ```swift
/// let fox = FakeBook(title: "Fantastic Mr Fox", authors: ["Roald Dahl"], year: 1970,
///                    isbn13: "9780140328721", isbn10: "0140328726")
/// fox.workKey      // "/works/OL…W", derived from the title and ISBNs unless given
/// ```
public struct FakeBook: Sendable, Hashable, Codable {
    /// The title, without subtitle.
    public var title: String
    /// The subtitle, if any.
    public var subtitle: String?
    /// Author names, "First Last".
    public var authors: [String]
    /// Year of publication (Open Library's `first_publish_year` for the work: the earliest).
    public var year: Int?
    /// Open Library's `publish_date` as people type it (`May 2, 2006`); default the year.
    public var publishDate: String?
    /// Google Books' `publishedDate` (`2018-12-11`); default the year.
    public var publishedDate: String?
    /// The ISBN-13 (digits), if the edition has one.
    public var isbn13: String?
    /// The ISBN-10, if the edition has one.
    public var isbn10: String?
    /// Open Library work key, `/works/OL…W`.
    public var workKey: String
    /// Open Library edition key, `/books/OL…M`.
    public var editionKey: String
    /// Google Books volume id.
    public var googleVolumeID: String
    /// Publisher, if known.
    public var publisher: String?
    /// Page count, if known.
    public var pageCount: Int?

    /// Creates a book. Keys left out are derived from the title and ISBNs, the same every run.
    ///
    /// - Parameters:
    ///   - title: the title, without subtitle.
    ///   - subtitle: the subtitle, if any.
    ///   - authors: author names, "First Last".
    ///   - year: year of publication.
    ///   - isbn13: the ISBN-13, if any.
    ///   - isbn10: the ISBN-10, if any.
    ///   - workKey: Open Library work key (`/works/OL…W`); books sharing one are editions of one work.
    ///   - editionKey: Open Library edition key (`/books/OL…M`).
    ///   - googleVolumeID: Google Books volume id.
    ///   - publishDate: Open Library's `publish_date` text (default: the year).
    ///   - publishedDate: Google's `publishedDate` text (default: the year).
    ///   - publisher: publisher name.
    ///   - pageCount: number of pages.
    public init(title: String, subtitle: String? = nil, authors: [String], year: Int? = nil,
                isbn13: String? = nil, isbn10: String? = nil, workKey: String? = nil, editionKey: String? = nil,
                googleVolumeID: String? = nil, publishDate: String? = nil, publishedDate: String? = nil,
                publisher: String? = nil, pageCount: Int? = nil) {
        self.title = title
        self.subtitle = subtitle
        self.authors = authors
        self.year = year
        self.isbn13 = isbn13
        self.isbn10 = isbn10
        self.publishDate = publishDate ?? year.map(String.init)
        self.publishedDate = publishedDate ?? year.map(String.init)
        self.publisher = publisher
        self.pageCount = pageCount
        let seed = FakeBook.hash("\(title)|\(isbn13 ?? "")|\(isbn10 ?? "")")
        self.workKey = workKey ?? "/works/OL\(seed % 90_000_000 + 10_000_000)W"
        self.editionKey = editionKey ?? "/books/OL\((seed >> 20) % 90_000_000 + 10_000_000)M"
        self.googleVolumeID = googleVolumeID ?? FakeBook.volumeID(seed)
    }

    /// `Title: Subtitle`, or the title.
    public var fullTitle: String { subtitle.map { "\(title): \($0)" } ?? title }

    /// Every ISBN of the book as an ISBN-13 (the ISBN-10 converted), without repeats.
    public var isbn13s: [String] {
        var result: [String] = []
        for raw in [isbn13, isbn10].compactMap({ $0 }) {
            if case .success(let isbn) = ISBN.parse(raw), !result.contains(isbn.isbn13) { result.append(isbn.isbn13) }
        }
        return result
    }

    /// `OL…M` without the `/books/` prefix.
    public var editionID: String { String(editionKey.split(separator: "/").last ?? "") }
    /// `OL…W` without the `/works/` prefix.
    public var workID: String { String(workKey.split(separator: "/").last ?? "") }

    /// `count` distinct books with valid ISBN-13s and ISBN-10s, the same for the same seed:
    /// for end-to-end tests and benchmarks.
    ///
    /// ```swift
    /// let books = FakeBook.generated(count: 1_500)
    /// let server = FakeBookServices(books: books)
    /// ```
    public static func generated(count: Int, seed: UInt64 = 1) -> [FakeBook] {
        let adjectives = ["Silent", "Hidden", "Broken", "Golden", "Last", "Winter", "Distant", "Burning",
                          "Quiet", "Secret", "Wandering", "Forgotten", "Shattered", "Northern", "Crimson", "Endless"]
        let nouns = ["River", "Garden", "Empire", "Harbour", "Library", "Mountain", "Orchard", "Kingdom",
                     "Lantern", "Archive", "Island", "Voyage", "Cathedral", "Forest", "Machine", "Letter"]
        let givenNames = ["Ada", "Bram", "Clara", "Dmitri", "Elena", "Farah", "Gustav", "Hana", "Ines", "Jonas",
                          "Kofi", "Lena", "Mateo", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tomoko"]
        let familyNames = ["Achebe", "Borges", "Calvino", "Dinesen", "Eco", "Fuentes", "Grass", "Hesse", "Ishiguro",
                           "Jansson", "Kafka", "Lessing", "Mahfouz", "Némirovsky", "Oz", "Pamuk", "Quignard",
                           "Rulfo", "Saramago", "Tokarczuk"]
        var generator = SplitMix64(seed: seed)
        var books: [FakeBook] = []
        books.reserveCapacity(count)
        for index in 0..<count {
            let title = "The \(adjectives[Int(generator.next() % 16)]) \(nouns[Int(generator.next() % 16)]) \(index + 1)"
            let author = "\(givenNames[Int(generator.next() % 20)]) \(familyNames[Int(generator.next() % 20)])"
            let year = 1900 + Int(generator.next() % 125)
            // ISBN-10 body: group 0, then 8 digits unique per index (the seed picks the range).
            let number = (Int(seed % 50) * 1_000_000 + index) % 100_000_000
            let body = "0" + String(number).leftPadded(to: 8)
            let isbn10 = body + String(isbn10Check(body))
            let isbn13 = (try? ISBN(isbn10))?.isbn13
            books.append(FakeBook(title: title, authors: [author], year: year, isbn13: isbn13, isbn10: isbn10,
                                  workKey: "/works/OL\(1_000_000 + index)W", editionKey: "/books/OL\(2_000_000 + index)M",
                                  googleVolumeID: volumeID(hash(title))))
        }
        return books
    }

    static func isbn10Check(_ body: String) -> Character {
        let digits = body.compactMap(\.wholeNumberValue)
        let sum = digits.enumerated().reduce(0) { $0 + (10 - $1.offset) * $1.element }
        let check = (11 - sum % 11) % 11
        return check == 10 ? "X" : Character(String(check))
    }

    /// FNV-1a, so derived keys are the same in every run and on every machine.
    static func hash(_ text: String) -> UInt64 {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value = value &* 0x100_0000_01b3
        }
        return value
    }

    /// A 12-character volume id in Google's alphabet.
    static func volumeID(_ seed: UInt64) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var generator = SplitMix64(seed: seed)
        return String((0..<12).map { _ in alphabet[Int(generator.next() % 64)] })
    }
}

/// A small, fast, seedable generator (SplitMix64), for reproducible fake data, fault draws and
/// generated test cases: a failure names a seed that reproduces it.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that draws the same numbers for the same seed.
    public init(seed: UInt64) { state = seed }

    /// The next number.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

extension String {
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
