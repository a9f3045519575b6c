import Foundation

/// A small, fast JSON writer for the few shapes the import hot path stores (string arrays and
/// flat objects). Foundation's `JSONEncoder` costs tens of microseconds a record, which a
/// million-row import cannot afford; reading back uses `JSONDecoder`.
enum JSONText {
    static func string(_ value: String, into output: inout String) {
        output.append("\"")
        var needsEscaping = false
        for byte in value.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscaping = true
            break
        }
        if !needsEscaping {
            output.append(value)
        } else {
            for scalar in value.unicodeScalars {
                switch scalar {
                case "\"": output.append("\\\"")
                case "\\": output.append("\\\\")
                case "\n": output.append("\\n")
                case "\r": output.append("\\r")
                case "\t": output.append("\\t")
                case _ where scalar.value < 0x20:
                    let hex = String(scalar.value, radix: 16)
                    output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
                default: output.unicodeScalars.append(scalar)
                }
            }
        }
        output.append("\"")
    }

    static func array(_ values: [String]) -> String {
        var output = "["
        output.reserveCapacity(values.reduce(2) { $0 + $1.utf8.count + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { output.append(",") }
            string(value, into: &output)
        }
        output.append("]")
        return output
    }

    /// Writes an object from ordered (key, value) pairs; nil values are left out.
    static func object(_ fields: [(String, Value?)]) -> String {
        var output = "{"
        var first = true
        for (key, value) in fields {
            guard let value else { continue }
            if !first { output.append(",") }
            first = false
            string(key, into: &output)
            output.append(":")
            switch value {
            case .string(let text): string(text, into: &output)
            case .strings(let list): output.append(array(list))
            case .raw(let json): output.append(json)
            }
        }
        output.append("}")
        return output
    }

    enum Value {
        case string(String)
        case strings([String])
        case raw(String)
    }

    static func decodeArray(_ text: String?) -> [String] {
        guard let text, let data = text.data(using: .utf8),
              let values = try? JSONDecoder().decode([String].self, from: data) else { return [] }
        return values
    }
}
