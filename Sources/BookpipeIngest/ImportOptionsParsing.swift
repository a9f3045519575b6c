import BookpipeCore

/// A reading option that cannot be used, as `--format`, `--map` or `--delimiter` on the command
/// line, or `format`, `map` or `delimiter` of a pipeline file's `read-csv`, gave it.
public struct ImportOptionsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The setting: `format`, `map` or `delimiter`.
    public var setting: String
    /// What it takes, and what it was given: `takes one character (…) or 'tab', not 'ab'`.
    public var problem: String

    /// `delimiter takes one character …`.
    public var description: String { "\(setting) \(problem)" }
}

extension ImportOptions {
    /// The options as people write them.
    /// - Parameters:
    ///   - format: A format name (`goodreads`, …, `generic`), or nil to detect it.
    ///   - map: `field=Header` pairs, each string possibly holding several separated by commas.
    ///   - mapLines: More pairs, one a line (a map file's lines; blank lines and `#` comments skipped).
    ///   - delimiter: One character, or `tab` (or `\t`), or nil to sniff it.
    ///   - key: The header of the column that holds the list's ids, or nil.
    ///   - list: The list's name, or nil for the format's.
    /// - Throws: ``ImportOptionsError`` naming the value and what is valid. A format name or a
    ///   mapped field bookpipe does not know is the reader's error, naming the file
    ///   (``checkNames()`` finds them before any file is read).
    public static func parsing(format: String?, map: [String], mapLines: [String] = [], delimiter: String?,
                               key: String? = nil, list: String? = nil) throws(ImportOptionsError) -> ImportOptions {
        var columnMap: [String: String] = [:]
        let entries = map.flatMap { $0.split(separator: ",").map(String.init) }
            + mapLines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw ImportOptionsError(setting: "map", problem: "takes field=header pairs, e.g. title=Titel,author=Autor; '\(entry)' is not one")
            }
            let field = parts[0].lowercased()
            columnMap[field] = parts[1]
        }
        var delimiterByte: UInt8?
        if let delimiter {
            if delimiter == "tab" || delimiter == "\\t" || delimiter == "\t" {
                delimiterByte = UInt8(ascii: "\t")
            } else if delimiter.utf8.count == 1, let byte = delimiter.utf8.first {
                delimiterByte = byte
            } else {
                throw ImportOptionsError(setting: "delimiter", problem: "takes one character (',' ';' '|') or 'tab', not '\(delimiter)'")
            }
        }
        var options = ImportOptions(formatName: format, columnMap: columnMap, delimiter: delimiterByte, keyColumn: key)
        options.listName = list
        return options
    }

    /// Refuses a format name or a mapped field bookpipe does not know, before any file is read
    /// (a pipeline file's `read-csv` is checked when the file is validated).
    /// - Throws: ``ImportOptionsError`` naming the value and the valid ones.
    public func checkNames() throws(ImportOptionsError) {
        if let format = formatName, format.lowercased() != "generic",
           !ImportFormat.known.contains(where: { $0.name == format.lowercased() }) {
            let names = ImportFormat.known.map(\.name) + ["generic"]
            throw ImportOptionsError(setting: "format", problem: "takes one of \(names.joined(separator: ", ")), not '\(format)'")
        }
        for field in columnMap.keys.sorted() where !Self.mappableFields.contains(field) {
            throw ImportOptionsError(setting: "map", problem: "names fields among \(Self.mappableFields.joined(separator: ", ")), not '\(field)'")
        }
    }

    /// These options with every value `other` sets put over them: a command's flags over a
    /// pipeline file's `read-csv` settings.
    public func overridden(by other: ImportOptions) -> ImportOptions {
        var merged = self
        if let format = other.formatName { merged.formatName = format }
        merged.columnMap.merge(other.columnMap) { _, theirs in theirs }
        if let delimiter = other.delimiter { merged.delimiter = delimiter }
        if let key = other.keyColumn { merged.keyColumn = key }
        if let list = other.listName { merged.listName = list }
        return merged
    }
}
