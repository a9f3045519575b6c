import Foundation

/// Counts the lines or records of an input quickly, for the enrichment's denominator and plan.
public enum InputLineCounter {
    /// Records of a CSV file (line breaks inside double-quoted fields do not end a record: a
    /// Goodreads review spans lines), header included; lines of any other file (TSV quotes
    /// nothing).
    public static func records(in path: String) -> Int {
        guard path.lowercased().hasSuffix(".csv") else { return lines(in: path) }
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        var count = 0
        var quoted = false
        var lastByte: UInt8 = 10
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            let bytes = chunk.span
            for index in bytes.indices {
                let byte = bytes[index]
                // `""` inside a quoted field toggles twice: still quoted.
                if byte == 34 { quoted.toggle() } else if byte == 10, !quoted { count += 1 }
            }
            lastByte = chunk.last ?? lastByte
        }
        return count + (lastByte == 10 ? 0 : 1)
    }

    /// Lines of a file (a last line without a line break counts).
    public static func lines(in path: String) -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else { return 0 }
        defer { try? handle.close() }
        var count = 0
        var lastByte: UInt8 = 10
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            let bytes = chunk.span
            for index in bytes.indices where bytes[index] == 10 { count += 1 }
            lastByte = chunk.last ?? lastByte
        }
        return count + (lastByte == 10 ? 0 : 1)
    }
}
