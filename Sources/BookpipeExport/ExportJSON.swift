import BookpipeLibrary

/// The JSON of the export contract, written directly: the same bytes Foundation's
/// `JSONSerialization` writes with `.sortedKeys` and `.withoutEscapingSlashes` (strings and
/// integers through the store's `JSONText`, so JSON is escaped in one place). On Linux
/// `JSONSerialization` sorts keys through ICU collation, about 170 µs a record: exporting 200,000
/// records took 37 s with it, 3.2 s without.
enum ExportJSON {
    /// A JSON value.
    ///
    /// Not `indirect`: arrays already hold their elements out of line, and an indirect case costs an
    /// allocation per value (about 30 a record).
    enum Value {
        case null
        case bool(Bool)
        case int(Int)
        case double(Double)
        case string(String)
        case strings([String])
        case array([Value])
        /// Keys in any order; they are written sorted (``precedes(_:_:)``).
        case object([(String, Value)])
    }

    /// The value's JSON text.
    static func text(_ value: Value) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        append(value, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func append(_ value: Value, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): JSONText.appendInteger(number, to: &output)
        case .double(let number): appendDouble(number, to: &output)
        case .string(let text): JSONText.appendString(text, to: &output)
        case .strings(let texts):
            output.append(UInt8(ascii: "["))
            for index in texts.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONText.appendString(texts[index], to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for index in items.indices {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                append(items[index], to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // Members given in key order (as the export contract builds its objects) are written as
            // they are: checking takes one comparison per key, sorting tuples of values took a third
            // of an export's time.
            if isSorted(members) {
                appendMembers(members, to: &output)
            } else {
                appendMembers(members.sorted(by: { precedes($0.0, $1.0) }), to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Whether `members`' keys are in ``precedes(_:_:)`` order.
    static func isSorted(_ members: [(String, Value)]) -> Bool {
        var index = 1
        while index < members.count {
            if !precedes(members[index - 1].0, members[index].0) { return false }
            index += 1
        }
        return true
    }

    /// Appends `members` in the order given, comma-separated, without the braces.
    private static func appendMembers(_ members: [(String, Value)], to output: inout [UInt8]) {
        for index in members.indices {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONText.appendString(members[index].0, to: &output)
            output.append(UInt8(ascii: ":"))
            append(members[index].1, to: &output)
        }
    }

    /// A number as `JSONSerialization` writes it: Swift's shortest form, without a trailing `.0`
    /// (`3`, `0.42`, `1e-07`, `-0`). Not-a-number and infinities, which JSON cannot hold, are null.
    static func appendDouble(_ number: Double, to output: inout [UInt8]) {
        guard number.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        output.append(contentsOf: text.utf8)
    }

    /// The key order of `JSONSerialization`'s `.sortedKeys`: case-insensitive, runs of digits
    /// compared as numbers (`item2` before `item10`), then case-sensitive to break ties.
    ///
    /// It is the same order for keys made of ASCII letters and digits that start with a letter and
    /// do not differ only in case or in leading zeros, which every key of the export contract is
    /// (`ExportContractTests` checks). Beyond that, Foundation follows ICU's collation, which this
    /// does not: `_x` comes before `0`, `isbn` before `ISBN`, `item2` before `item02` there.
    static func precedes(_ left: String, _ right: String) -> Bool {
        // Contract keys are literals, contiguous UTF-8: compared in place, with no String index
        // arithmetic (a record's objects hold about 20 keys, each compared with its neighbour).
        let inPlace = left.utf8.withContiguousStorageIfAvailable { leftBytes in
            right.utf8.withContiguousStorageIfAvailable { rightBytes in precedes(bytes: leftBytes[...], rightBytes[...]) }
        }
        if let inPlace, let answer = inPlace { return answer }
        return precedes(bytes: Array(left.utf8)[...], Array(right.utf8)[...])
    }

    /// ``precedes(_:_:)`` on the keys' UTF-8 bytes.
    private static func precedes<Bytes: Collection<UInt8>>(bytes left: Bytes, _ right: Bytes) -> Bool
    where Bytes.SubSequence == Bytes {
        var leftBytes = left
        var rightBytes = right
        func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
        func folded(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
        while let leftByte = leftBytes.first, let rightByte = rightBytes.first {
            if isDigit(leftByte) && isDigit(rightByte) {
                let leftDigits = leftBytes.prefix(while: isDigit)
                let rightDigits = rightBytes.prefix(while: isDigit)
                let leftNumber = leftDigits.drop(while: { $0 == 0x30 })
                let rightNumber = rightDigits.drop(while: { $0 == 0x30 })
                if leftNumber.count != rightNumber.count { return leftNumber.count < rightNumber.count }
                if !leftNumber.elementsEqual(rightNumber) { return leftNumber.lexicographicallyPrecedes(rightNumber) }
                leftBytes = leftBytes.dropFirst(leftDigits.count)
                rightBytes = rightBytes.dropFirst(rightDigits.count)
                continue
            }
            if folded(leftByte) != folded(rightByte) { return folded(leftByte) < folded(rightByte) }
            leftBytes = leftBytes.dropFirst()
            rightBytes = rightBytes.dropFirst()
        }
        if leftBytes.isEmpty != rightBytes.isEmpty { return leftBytes.isEmpty }
        return left.lexicographicallyPrecedes(right)
    }
}
