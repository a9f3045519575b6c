/// Reads the year out of the publication dates sources send.
///
/// Open Library writes `publish_date` as people typed it (`1996`, `May 2, 2006`, `2006-05`,
/// `c1996`, `[1996?]`); Google Books sends `2004`, `2020-11`, `2018-12-11` or a timestamp
/// (`2019-10-03T00:00:00+02:00`). The year is the first run of exactly four digits.
///
/// ```swift
/// PublicationYear.parse("May 2, 2006")                 // 2006
/// PublicationYear.parse("2019-10-03T00:00:00+02:00")   // 2019
/// PublicationYear.parse("19uu")                        // nil
/// ```
enum PublicationYear {
    /// The year in `text`, or `nil` when it has no four-digit run between 1000 and 2999.
    static func parse(_ text: String?) -> Int? {
        guard let text else { return nil }
        var run = 0
        var value = 0
        var bytes = text.utf8.makeIterator()
        while true {
            let byte = bytes.next()
            if let byte, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                run += 1
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                if run > 4 { value = 0 }
                continue
            }
            if run == 4, (1000...2999).contains(value) { return value }
            run = 0
            value = 0
            if byte == nil { return nil }
        }
    }
}
