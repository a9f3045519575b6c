internal import Foundation

/// Byte-level fast paths for *simple* text: every scalar below U+0300 (ASCII, Latin-1, Latin
/// Extended-A and -B, IPA, spacing modifiers) and no `&`. That covers nearly every title and
/// author of a western library, and such text needs none of the expensive steps of the general
/// paths:
/// - without `&` there are no HTML entities to decode;
/// - it is already in NFC (no scalar below U+0300 is a combining mark, decomposes, or composes
///   with another one below U+0300), and each `Character` is one scalar (CR LF aside);
/// - each scalar folds to a comparison key on its own, so keys come from a table built once from
///   the general algorithm (``TextFolding/generalKey(_:)`` applied to every scalar).
///
/// Every fast path returns exactly what the general path returns (the differential tests in
/// `SimpleTextTests` compare them on random text), or nil when the text is not simple.
enum SimpleText {
    /// Scalars below this are simple.
    static let limit: UInt32 = 0x300

    struct Properties: OptionSet, Sendable {
        let rawValue: UInt8
        static let letter = Properties(rawValue: 1)
        static let uppercase = Properties(rawValue: 2)
        static let lowercase = Properties(rawValue: 4)
        static let alphabetic = Properties(rawValue: 8)
        static let whitespace = Properties(rawValue: 16)
        static let control = Properties(rawValue: 32)
    }

    /// `Character` and scalar properties of every simple scalar.
    static let properties: [Properties] = (0..<limit).map { value in
        guard let scalar = Unicode.Scalar(value) else { return [] }
        let character = Character(scalar)
        var properties: Properties = []
        if character.isLetter { properties.insert(.letter) }
        if character.isUppercase { properties.insert(.uppercase) }
        if character.isLowercase { properties.insert(.lowercase) }
        if scalar.properties.isAlphabetic { properties.insert(.alphabetic) }
        if scalar.properties.isWhitespace { properties.insert(.whitespace) }
        if scalar.properties.generalCategory == .control { properties.insert(.control) }
        return properties
    }

    /// What one scalar contributes to a comparison key: `nil` entries separate words, others are
    /// UTF-8 bytes to emit. Built from the general algorithm, scalar by scalar.
    static let keyOperations: [[[UInt8]?]] = (0..<limit).map { value in
        guard let scalar = Unicode.Scalar(value), value != UInt32(UInt8(ascii: "&")) else { return [] }
        return TextFolding.keyOperations(folded: TextFolding.fold(String(Character(scalar))))
    }

    // MARK: - Scanning

    /// Calls `body` with each scalar of simple UTF-8 text and the byte range it occupies; false
    /// when the text is not simple (a scalar at or above U+0300, or `&` unless allowed).
    @inline(__always)
    static func forEachScalar(_ bytes: UnsafeBufferPointer<UInt8>, allowAmpersand: Bool = false,
                              _ body: (_ scalar: UInt32, _ start: Int, _ end: Int) -> Void) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                if byte == UInt8(ascii: "&") && !allowAmpersand { return false }
                body(UInt32(byte), index, index + 1)
                index += 1
            } else if byte >= 0xC2 && byte <= 0xCB && index + 1 < count {
                body(UInt32(byte & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F), index, index + 2)
                index += 2
            } else {
                return false
            }
        }
        return true
    }

    /// True when the text is simple.
    static func isSimple(_ bytes: UnsafeBufferPointer<UInt8>, allowAmpersand: Bool = false) -> Bool {
        for byte in bytes where byte >= 0xCC || (byte == UInt8(ascii: "&") && !allowAmpersand) { return false }
        return true
    }

    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }

    // MARK: - Clean-up

    /// ``TextFolding/collapseWhitespace(_:)`` of simple text; the text itself when nothing
    /// changes. With `allowAmpersand` false this is also ``TextFolding/clean(_:)``.
    static func collapseWhitespace(_ text: String, allowAmpersand: Bool) -> String? {
        var copy = text
        enum Outcome { case notSimple, unchanged, changed([UInt8]) }
        let outcome = copy.withUTF8 { bytes -> Outcome in
            // Pass 1: is it simple, and does anything change?
            var changed = false
            var pending = false
            var hasOutput = false
            let simple = forEachScalar(bytes, allowAmpersand: allowAmpersand) { scalar, _, _ in
                let properties = Self.properties[Int(scalar)]
                if properties.contains(.whitespace) {
                    if scalar != 0x20 || !hasOutput || pending { changed = true }
                    pending = hasOutput
                } else if properties.contains(.control) {
                    changed = true
                } else {
                    pending = false
                    hasOutput = true
                }
            }
            guard simple else { return .notSimple }
            if pending { changed = true }
            guard changed else { return .unchanged }
            // Pass 2: write the changed text.
            var output: [UInt8] = []
            output.reserveCapacity(bytes.count)
            pending = false
            _ = forEachScalar(bytes, allowAmpersand: allowAmpersand) { scalar, start, end in
                let properties = Self.properties[Int(scalar)]
                if properties.contains(.whitespace) {
                    pending = !output.isEmpty
                } else if !properties.contains(.control) {
                    if pending {
                        output.append(0x20)
                        pending = false
                    }
                    output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                }
            }
            return .changed(output)
        }
        switch outcome {
        case .notSimple: return nil
        case .unchanged: return text
        case .changed(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// ``TextFolding/key(_:)`` of simple text.
    static func key(_ text: String) -> String? {
        var copy = text
        return copy.withUTF8 { bytes -> String? in
            guard let output = key(bytes) else { return nil }
            return String(decoding: output, as: UTF8.self)
        }
    }

    /// ``TextFolding/key(_:)`` of simple UTF-8 bytes, as bytes.
    static func key(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var pending = false
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte < 0x80 {
                index += 1
                switch byte {
                case UInt8(ascii: "&"): return nil
                case 0x00...0x1F, 0x7F, UInt8(ascii: "'"), UInt8(ascii: "`"): continue
                case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    if pending && !output.isEmpty { output.append(0x20) }
                    pending = false
                    output.append(byte + 32)
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "$"), UInt8(ascii: "+"), UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"),
                     UInt8(ascii: "^"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                    if pending && !output.isEmpty { output.append(0x20) }
                    pending = false
                    output.append(byte)
                default:
                    pending = true
                }
            } else if byte >= 0xC2 && byte <= 0xCB && index + 1 < count {
                let scalar = Int(byte & 0x1F) << 6 | Int(bytes[index + 1] & 0x3F)
                index += 2
                for operation in keyOperations[scalar] {
                    if let emitted = operation {
                        if pending && !output.isEmpty { output.append(0x20) }
                        pending = false
                        output.append(contentsOf: emitted)
                    } else {
                        pending = true
                    }
                }
            } else {
                return nil
            }
        }
        return output
    }

    /// The number of alphabetic scalars of simple text (``TextFolding/letterCount(_:)``).
    static func letterCount(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        _ = forEachScalar(bytes, allowAmpersand: true) { scalar, _, _ in
            if properties[Int(scalar)].contains(.alphabetic) { count += 1 }
        }
        return count
    }

    /// The bytes without leading and trailing whitespace (simple text).
    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end {
            if isSpace(bytes[start]) {
                start += 1
            } else if bytes[start] == 0xC2, start + 1 < end, bytes[start + 1] == 0x85 || bytes[start + 1] == 0xA0 {
                start += 2
            } else {
                break
            }
        }
        while end > start {
            if isSpace(bytes[end - 1]) {
                end -= 1
            } else if end - 2 >= start, bytes[end - 2] == 0xC2, bytes[end - 1] == 0x85 || bytes[end - 1] == 0xA0 {
                end -= 2
            } else {
                break
            }
        }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
