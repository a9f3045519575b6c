/// Builds query strings for the sources' URLs.
///
/// Values are percent-encoded byte by byte (UTF-8); only the unreserved characters of RFC 3986
/// and the few a caller allows stay as they are, so `&`, `=`, `+`, `#` and `%` in a title can
/// never change the query's meaning.
///
/// ```swift
/// URLQuery.string([("title", "Harry Potter & the Philosopher's Stone"), ("limit", "10")])
/// // "title=Harry%20Potter%20%26%20the%20Philosopher%27s%20Stone&limit=10"
/// URLQuery.string([("bibkeys", "ISBN:9780140328721,ISBN:9780261103344")], keeping: ":,")
/// // "bibkeys=ISBN:9780140328721,ISBN:9780261103344"
/// ```
enum URLQuery {
    /// `name=value&…`, each value encoded with ``encode(_:keeping:spaceAsPlus:)``.
    static func string(_ items: [(String, String)], keeping extra: String = "", spaceAsPlus: Bool = false) -> String {
        items.map { "\(encode($0.0, keeping: "", spaceAsPlus: false))=\(encode($0.1, keeping: extra, spaceAsPlus: spaceAsPlus))" }
            .joined(separator: "&")
    }

    /// Percent-encodes `value`, keeping letters, digits, `-._~` and the characters of `extra`.
    /// With `spaceAsPlus`, a space becomes `+` (form encoding, which Google's `q=` uses).
    static func encode(_ value: String, keeping extra: String = "", spaceAsPlus: Bool = false) -> String {
        let kept = Set(extra.utf8)
        var output = ""
        output.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " ") where spaceAsPlus:
                output += "+"
            case _ where kept.contains(byte) && byte < 0x80:
                output.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                output += "%" + hexDigits[Int(byte >> 4)] + hexDigits[Int(byte & 0x0F)]
            }
        }
        return output
    }

    private static let hexDigits = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
}
