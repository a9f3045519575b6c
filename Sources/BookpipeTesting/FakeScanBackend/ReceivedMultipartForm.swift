import Foundation

/// A `multipart/form-data` body (RFC 7578) split into its parts, bytes untouched.
///
/// ```swift
/// let form = try ReceivedMultipartForm(body: request.body, contentType: request.header("Content-Type"))
/// let image = form.part(named: "image")   // image?.filename == "shelf1.jpg"
/// ```
public struct ReceivedMultipartForm: Sendable {
    /// One part of the form.
    public struct Part: Sendable {
        /// The part's header fields, in order.
        public var headers: [(name: String, value: String)]
        /// `name` from `Content-Disposition: form-data; name="…"`.
        public var name: String?
        /// `filename` from `Content-Disposition`, if the part is a file.
        public var filename: String?
        /// The part's `Content-Type`, if given.
        public var contentType: String?
        /// The part's content, exactly as sent (binary safe).
        public var body: [UInt8]
    }

    /// Why a body could not be read as `multipart/form-data`.
    public struct FormatError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, for a `400` answer.
        public var reason: String
        public var description: String { reason }
    }

    /// The parts in the order sent.
    public var parts: [Part]

    /// Splits `body` at the boundary given in `contentType`.
    /// - Throws: ``FormatError`` when the content type is not `multipart/form-data` with a
    ///   boundary, or the body does not start with the boundary or lacks the closing one.
    public init(body: [UInt8], contentType: String?) throws(FormatError) {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else {
            throw FormatError(reason: "Content-Type is \(contentType ?? "missing"), not multipart/form-data")
        }
        guard let boundary = Self.parameter("boundary", in: contentType), !boundary.isEmpty else {
            throw FormatError(reason: "Content-Type has no boundary parameter")
        }
        let delimiter = Array("--\(boundary)".utf8)
        let lineBreak: [UInt8] = [13, 10]
        guard let first = body.firstRange(of: delimiter) else {
            throw FormatError(reason: "the body does not contain the boundary \(boundary)")
        }
        var parts: [Part] = []
        var position = first.upperBound
        let partDelimiter = lineBreak + delimiter
        while true {
            // After a delimiter: "--" closes the body, otherwise a line break starts a part.
            if body[position...].starts(with: [45, 45]) { break }
            guard body[position...].starts(with: lineBreak) else {
                throw FormatError(reason: "a boundary line is not followed by CRLF")
            }
            position += 2
            guard let headEnd = body[position...].firstRange(of: lineBreak + lineBreak)
                    ?? (body[position...].starts(with: lineBreak) ? position..<(position + 2) : nil) else {
                throw FormatError(reason: "a part's header fields do not end with an empty line")
            }
            let headerText = String(decoding: body[position..<headEnd.lowerBound], as: UTF8.self)
            guard let next = body[headEnd.upperBound...].firstRange(of: partDelimiter) else {
                throw FormatError(reason: "the closing boundary --\(boundary)-- is missing")
            }
            parts.append(Self.part(headerText: headerText, body: Array(body[headEnd.upperBound..<next.lowerBound])))
            position = next.upperBound
        }
        self.parts = parts
    }

    /// The first part whose `name` is `name`.
    public func part(named name: String) -> Part? {
        parts.first { $0.name == name }
    }

    private static func part(headerText: String, body: [UInt8]) -> Part {
        let headers = headerText.components(separatedBy: "\r\n").compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name }?.value
        }
        let disposition = header("content-disposition") ?? ""
        return Part(headers: headers, name: parameter("name", in: disposition),
                    filename: parameter("filename", in: disposition),
                    contentType: header("content-type"), body: body)
    }

    /// The value of `name=value` or `name="value"` in a header value's `;`-separated parameters.
    static func parameter(_ name: String, in headerValue: String) -> String? {
        var rest = Substring(headerValue)
        while let semicolon = rest.firstIndex(of: ";") {
            rest = rest[rest.index(after: semicolon)...].drop { $0 == " " || $0 == "\t" }
            guard let equals = rest.firstIndex(of: "="),
                  rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            let value = rest[rest.index(after: equals)...]
            if value.first == "\"" {
                var result = ""
                var escaped = false
                for character in value.dropFirst() {
                    if escaped { result.append(character); escaped = false }
                    else if character == "\\" { escaped = true }
                    else if character == "\"" { return result }
                    else { result.append(character) }
                }
                return result
            }
            return String(value.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
