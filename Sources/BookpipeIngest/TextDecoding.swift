/// Turning field bytes into Swift strings: UTF-8 validation, and repair of invalid bytes as
/// Latin-1 (Windows-1252), which is what spreadsheet programs and LibraryThing mix into exports.
enum TextDecoding {
    /// True when every byte is ASCII (checked eight bytes at a time).
    @inline(__always)
    static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index + 8 <= count {
            if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                return false
            }
            index += 8
        }
        while index < count {
            if base.load(fromByteOffset: index, as: UInt8.self) >= 0x80 { return false }
            index += 1
        }
        return true
    }

    /// The length of the valid UTF-8 sequence starting at `index`, or 0 when the byte there does
    /// not start one (Unicode's well-formed table: no overlongs, no surrogates, nothing past U+10FFFF).
    @inline(__always)
    static func validSequenceLength(_ bytes: UnsafeRawBufferPointer, at index: Int) -> Int {
        let count = bytes.count
        let lead = bytes[index]
        if lead < 0x80 { return 1 }
        func continuation(_ offset: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            index + offset < count && bytes[index + offset] >= low && bytes[index + offset] <= high
        }
        switch lead {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0:
            return continuation(1, 0xA0) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : 0
        case 0xED:
            return continuation(1, 0x80, 0x9F) && continuation(2) ? 3 : 0
        case 0xF0:
            return continuation(1, 0x90) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4:
            return continuation(1, 0x80, 0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default:
            return 0
        }
    }

    /// True when the bytes are well-formed UTF-8.
    static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let count = bytes.count
        var index = 0
        while index < count {
            // ASCII runs eight bytes at a time, then a byte at a time.
            if index + 8 <= count
                && base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
                continue
            }
            if base.load(fromByteOffset: index, as: UInt8.self) < 0x80 {
                index += 1
                continue
            }
            let length = validSequenceLength(bytes, at: index)
            if length == 0 { return false }
            index += length
        }
        return true
    }

    /// Windows-1252's characters for 0x80…0x9F (0 where the code page leaves a hole: those bytes
    /// become the Latin-1 control character of the same value).
    private static let windows1252High: [UInt32] = [
        0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0,
        0x017D, 0, 0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0, 0x017E, 0x0178,
    ]

    /// The character a stray byte stands for when read as Windows-1252 (a superset of Latin-1's
    /// printable characters).
    static func windows1252Scalar(_ byte: UInt8) -> Unicode.Scalar {
        if byte >= 0x80 && byte <= 0x9F {
            let mapped = windows1252High[Int(byte - 0x80)]
            if mapped != 0, let scalar = Unicode.Scalar(mapped) { return scalar }
        }
        return Unicode.Scalar(byte)
    }

    /// Decodes bytes as UTF-8, reading every byte that is not part of a valid UTF-8 sequence as
    /// Windows-1252 (so a file mixing both keeps each character as its author meant it).
    static func decodeRepairingLatin1(_ bytes: UnsafeRawBufferPointer) -> String {
        var scalars = String.UnicodeScalarView()
        var index = 0
        while index < bytes.count {
            let length = validSequenceLength(bytes, at: index)
            if length == 0 {
                scalars.append(windows1252Scalar(bytes[index]))
                index += 1
                continue
            }
            var value = UInt32(bytes[index])
            switch length {
            case 2: value = (value & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
            case 3:
                value = (value & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
            case 4:
                value = (value & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12
                    | UInt32(bytes[index + 2] & 0x3F) << 6 | UInt32(bytes[index + 3] & 0x3F)
            default: break
            }
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            index += length
        }
        return String(scalars)
    }
}

/// The encoding found from the first bytes of a file.
enum SniffedEncoding: Equatable {
    case utf8
    case utf8BOM
    case utf16LE
    case utf16BE

    /// The name reported in ``DetectedFormat/encoding``.
    var name: String {
        switch self {
        case .utf8: "utf-8"
        case .utf8BOM: "utf-8-bom"
        case .utf16LE: "utf-16le-bom"
        case .utf16BE: "utf-16be-bom"
        }
    }

    /// How many bytes the byte-order mark takes.
    var bomLength: Int {
        switch self {
        case .utf8: 0
        case .utf8BOM: 3
        case .utf16LE, .utf16BE: 2
        }
    }

    /// Reads the byte-order mark, if any.
    static func sniff(_ prefix: [UInt8]) -> SniffedEncoding {
        if prefix.count >= 3 && prefix[0] == 0xEF && prefix[1] == 0xBB && prefix[2] == 0xBF { return .utf8BOM }
        if prefix.count >= 2 && prefix[0] == 0xFF && prefix[1] == 0xFE { return .utf16LE }
        if prefix.count >= 2 && prefix[0] == 0xFE && prefix[1] == 0xFF { return .utf16BE }
        return .utf8
    }
}

/// Deciding whether the start of a file is text at all.
enum TextCheck {
    /// Nil when the sample looks like text; otherwise why it does not (for ``IngestError/notText``).
    static func problem(inSample sample: ArraySlice<UInt8>) -> String? {
        guard !sample.isEmpty else { return nil }
        var nulCount = 0
        var oddNulCount = 0
        var controlCount = 0
        for (offset, byte) in sample.enumerated() {
            if byte == 0 {
                nulCount += 1
                if offset % 2 == 1 { oddNulCount += 1 }
            } else if byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D && byte != 0x0C {
                controlCount += 1
            }
        }
        if nulCount > 0 {
            let half = sample.count / 2
            if half > 0 && (oddNulCount * 10 >= half * 8 || (nulCount - oddNulCount) * 10 >= half * 8) {
                return "it has NUL bytes in its first kilobyte; it looks like UTF-16 without a byte-order mark, "
                    + "save it as UTF-8"
            }
            return "it has NUL bytes in its first kilobyte"
        }
        if controlCount * 20 > sample.count {
            return "\(controlCount) of its first \(sample.count) bytes are control characters"
        }
        return nil
    }
}
