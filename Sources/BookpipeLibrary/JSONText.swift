import Foundation

/// A small, fast JSON writer and reader for the few shapes the record columns use (arrays of
/// strings, numbers and arrays, and flat objects). Foundation's `JSONEncoder` costs tens of
/// microseconds a record, which a million-row import cannot afford.
package enum JSONText {
    /// Appends `value` as a JSON string (quotes, backslashes and control characters escaped; the
    /// same bytes as Foundation's `JSONSerialization` with `.withoutEscapingSlashes`).
    package static func appendString(_ value: String, to output: inout [UInt8]) {
        if value.utf8.withContiguousStorageIfAvailable({ appendString($0, to: &output) }) == nil {
            var copy = value
            copy.withUTF8 { appendString($0, to: &output) }
        }
    }

    /// Appends UTF-8 `bytes` as a JSON string.
    package static func appendString(_ bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var clean = true
        for byte in bytes where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            clean = false
            break
        }
        if clean {
            output.append(contentsOf: bytes)
        } else {
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                case 0..<0x20:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                               hex[Int(byte >> 4)], hex[Int(byte & 15)]])
                default: output.append(byte)
                }
            }
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends a decimal integer.
    package static func appendInteger(_ value: Int, to output: inout [UInt8]) {
        if value >= 0 && value < 10 {
            output.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        // Raw-field numbers and years, the usual integers of a record, without the general loop.
        if value >= 10 && value < 100 {
            output.append(UInt8(ascii: "0") + UInt8(value / 10))
            output.append(UInt8(ascii: "0") + UInt8(value % 10))
            return
        }
        if value >= 1000 && value < 10000 {
            output.append(UInt8(ascii: "0") + UInt8(value / 1000))
            output.append(UInt8(ascii: "0") + UInt8(value / 100 % 10))
            output.append(UInt8(ascii: "0") + UInt8(value / 10 % 10))
            output.append(UInt8(ascii: "0") + UInt8(value % 10))
            return
        }
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            if value == Int.min {
                output.append(contentsOf: String(value).utf8.dropFirst())
                return
            }
        }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // up to 20 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { output.append(buffer[index]) }
        }
    }

    /// A JSON array of strings.
    package static func array(_ values: [String]) -> String {
        var output: [UInt8] = [UInt8(ascii: "[")]
        output.reserveCapacity(values.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            appendString(value, to: &output)
        }
        output.append(UInt8(ascii: "]"))
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes an object from ordered (key, value) pairs; nil values are left out.
    package static func object(_ fields: [(String, Value?)]) -> String {
        var output: [UInt8] = []
        appendObject(fields, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends an object from ordered (key, value) pairs; nil values are left out.
    package static func appendObject(_ fields: [(String, Value?)], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        var first = true
        for (key, value) in fields {
            guard let value else { continue }
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            appendString(key, to: &output)
            output.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): appendString(text, to: &output)
            case .strings(let list):
                output.append(UInt8(ascii: "["))
                for (index, item) in list.enumerated() {
                    if index > 0 { output.append(UInt8(ascii: ",")) }
                    appendString(item, to: &output)
                }
                output.append(UInt8(ascii: "]"))
            case .raw(let json): output.append(contentsOf: json.utf8)
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    package enum Value {
        case string(String)
        case strings([String])
        case raw(String)
    }

    /// A JSON array of strings, or [] when the text is nil or not one.
    package static func decodeArray(_ text: String?) -> [String] {
        guard let text, case .array(let items)? = parse(text) else { return [] }
        return items.compactMap { if case .string(let value) = $0 { return value } else { return nil } }
    }

    // MARK: - Reading

    /// A parsed JSON value (objects are not needed by the record columns).
    package enum Parsed: Equatable {
        case null
        case number(Double)
        case integer(Int)
        case string(String)
        case array([Parsed])
        case bool(Bool)
    }

    /// Parses a JSON value made of arrays, strings, numbers, booleans and null; nil when the
    /// text is anything else (objects included).
    package static func parse(_ text: String) -> Parsed? {
        var text = text
        return text.withUTF8 { bytes -> Parsed? in
            var reader = Reader(bytes: bytes)
            guard let value = reader.value() else { return nil }
            reader.skipSpace()
            return reader.index == bytes.count ? value : nil
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D
                || bytes[index] == 0x09 { index += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func value() -> Parsed? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "["):
                index += 1
                var items: [Parsed] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                while true {
                    guard let item = value() else { return nil }
                    items.append(item)
                    skipSpace()
                    guard index < bytes.count else { return nil }
                    if bytes[index] == UInt8(ascii: ",") {
                        index += 1
                    } else if bytes[index] == UInt8(ascii: "]") {
                        index += 1
                        return .array(items)
                    } else {
                        return nil
                    }
                }
            case UInt8(ascii: "\""):
                return string().map(Parsed.string)
            case UInt8(ascii: "n"): return literal("null") ? .null : nil
            case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
            case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
            default:
                return number()
            }
        }

        mutating func number() -> Parsed? {
            let start = index
            var isInteger = true
            while index < bytes.count {
                let byte = bytes[index]
                if (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") {
                    index += 1
                } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                            || byte == UInt8(ascii: "+") {
                    isInteger = false
                    index += 1
                } else {
                    break
                }
            }
            guard index > start else { return nil }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if isInteger, let value = Int(text) { return .integer(value) }
            return Double(text).map(Parsed.number)
        }

        mutating func string() -> String? {
            index += 1  // opening quote
            let start = index
            // Fast path: no escapes.
            while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") {
                index += 1
            }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") {
                defer { index += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
            var output = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(decoding: output, as: UTF8.self)
                }
                guard byte == UInt8(ascii: "\\") else {
                    output.append(byte)
                    index += 1
                    continue
                }
                guard index + 1 < bytes.count else { return nil }
                let escaped = bytes[index + 1]
                index += 2
                switch escaped {
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                       bytes[index + 1] == UInt8(ascii: "u") {
                        index += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    output.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                default: output.append(escaped)
                }
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
                default: return nil
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
