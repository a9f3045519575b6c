import BookpipeCore
import BookpipeLibrary

extension RecordCoding {
    /// The `enrichment` column's text for `result`: the bytes ``encode(_:)`` (`JSONEncoder`, sorted
    /// keys) writes, written by hand. Saving an enrichment encodes one result a record, and
    /// `JSONEncoder` was 6 % of an offline enrichment's CPU (`benchmarks/enrichment/run-catalog.sh`). ``encode(_:)``
    /// stays the specification: the tests compare the two, and any value this writer does not
    /// handle byte for byte (a control character in a text, a breakdown key other than lowercase
    /// letters) is left to it.
    static func encodeEnrichment(_ result: EnrichmentResult) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        guard EnrichmentJSON.append(result, to: &output) else { return encode(result) }
        return String(decoding: output, as: UTF8.self)
    }
}

/// ``RecordCoding/encodeEnrichment(_:)``'s writer: each type's keys in sorted order, as
/// `JSONEncoder` with `.sortedKeys` writes them (absent optionals left out, an empty work key as
/// `null`, `/` escaped as `\/`). Every function returns false for a value it does not write.
private enum EnrichmentJSON {
    static func append(_ result: EnrichmentResult, to output: inout [UInt8]) -> Bool {
        output.append(contentsOf: #"{"candidates":["#.utf8)
        for (index, candidate) in result.candidates.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            guard append(candidate, to: &output) else { return false }
        }
        output.append(UInt8(ascii: "]"))
        if let failure = result.failure {
            guard key("failure", to: &output), string(failure, to: &output) else { return false }
        }
        if let match = result.match {
            _ = key("match", to: &output)
            guard append(match, to: &output) else { return false }
        }
        guard key("status", to: &output), string(result.status.rawValue, to: &output) else { return false }
        output.append(UInt8(ascii: "}"))
        return true
    }

    private static func append(_ match: Match, to output: inout [UInt8]) -> Bool {
        output.append(contentsOf: #"{"authors":"#.utf8)
        guard strings(match.authors, to: &output) else { return false }
        if let editionKey = match.editionKey {
            guard key("editionKey", to: &output), string(editionKey, to: &output) else { return false }
        }
        _ = key("score", to: &output)
        JSONText.appendInteger(match.score, to: &output)
        guard key("source", to: &output), string(match.source, to: &output),
              key("title", to: &output), string(match.title, to: &output),
              key("workKey", to: &output), optionalString(match.workKey, to: &output) else { return false }
        output.append(UInt8(ascii: "}"))
        return true
    }

    private static func append(_ candidate: Candidate, to output: inout [UInt8]) -> Bool {
        output.append(contentsOf: #"{"authors":"#.utf8)
        guard strings(candidate.authors, to: &output) else { return false }
        _ = key("breakdown", to: &output)
        output.append(UInt8(ascii: "{"))
        for (index, name) in candidate.breakdown.keys.sorted().enumerated() {
            guard name.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) }) else { return false }
            if index > 0 { output.append(UInt8(ascii: ",")) }
            _ = string(name, to: &output)
            output.append(UInt8(ascii: ":"))
            JSONText.appendInteger(candidate.breakdown[name] ?? 0, to: &output)
        }
        output.append(UInt8(ascii: "}"))
        if let editionKey = candidate.editionKey {
            guard key("editionKey", to: &output), string(editionKey, to: &output) else { return false }
        }
        guard key("isbn13s", to: &output), strings(candidate.isbn13s, to: &output) else { return false }
        if !candidate.otherEditions.isEmpty {
            guard key("otherEditions", to: &output), strings(candidate.otherEditions, to: &output) else { return false }
        }
        if let publisher = candidate.publisher {
            guard key("publisher", to: &output), string(publisher, to: &output) else { return false }
        }
        _ = key("score", to: &output)
        JSONText.appendInteger(candidate.score, to: &output)
        guard key("source", to: &output), string(candidate.source, to: &output),
              key("title", to: &output), string(candidate.title, to: &output),
              key("workKey", to: &output), optionalString(candidate.workKey, to: &output) else { return false }
        if let year = candidate.year {
            _ = key("year", to: &output)
            JSONText.appendInteger(year, to: &output)
        }
        output.append(UInt8(ascii: "}"))
        return true
    }

    /// `,"name":` (the first key of an object is written with its brace).
    private static func key(_ name: String, to output: inout [UInt8]) -> Bool {
        output.append(UInt8(ascii: ","))
        _ = string(name, to: &output)
        output.append(UInt8(ascii: ":"))
        return true
    }

    /// An empty text as `null` (the work key's encoding), else the text.
    private static func optionalString(_ value: String, to output: inout [UInt8]) -> Bool {
        if value.isEmpty {
            output.append(contentsOf: "null".utf8)
            return true
        }
        return string(value, to: &output)
    }

    private static func strings(_ values: [String], to output: inout [UInt8]) -> Bool {
        output.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            guard string(value, to: &output) else { return false }
        }
        output.append(UInt8(ascii: "]"))
        return true
    }

    /// A JSON string as `JSONEncoder` writes it: `"`, `\` and `/` escaped, other bytes as they
    /// are; false for a control character (left to `JSONEncoder`).
    private static func string(_ value: String, to output: inout [UInt8]) -> Bool {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                output.append(UInt8(ascii: "\\"))
                output.append(byte)
            case 0..<0x20:
                return false
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
        return true
    }
}
