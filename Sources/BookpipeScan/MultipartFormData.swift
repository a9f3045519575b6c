/// A `multipart/form-data` body (RFC 7578) with a random boundary.
///
/// ```swift
/// var form = MultipartFormData()
/// form.appendFile(name: "image", filename: "shelf.jpg", contentType: "image/jpeg", bytes: jpeg)
/// request.headers.append(("Content-Type", form.contentType))
/// request.body = form.encoded()
/// ```
public struct MultipartFormData: Sendable {
    /// The boundary between parts (`bookpipe-` and 32 random hexadecimal digits unless given).
    public let boundary: String
    private var body: [UInt8] = []

    /// Creates an empty form.
    /// - Parameter boundary: the boundary; nil makes a random one, which cannot occur in a JPEG
    ///   by accident more than once in 2^128 tries.
    public init(boundary: String? = nil) {
        if let boundary {
            self.boundary = boundary
        } else {
            var generator = SystemRandomNumberGenerator()
            let digits = Array("0123456789abcdef")
            self.boundary = "bookpipe-" + String((0..<32).map { _ in digits[Int(generator.next() % 16)] })
        }
    }

    /// The `Content-Type` header value: `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a file part.
    /// - Parameters:
    ///   - name: the field name (`image`).
    ///   - filename: the file name sent; `"`, CR and LF are percent-encoded as the HTML standard does.
    ///   - contentType: the part's type (`image/jpeg`).
    ///   - bytes: the file's bytes.
    public mutating func appendFile(name: String, filename: String, contentType: String, bytes: [UInt8]) {
        let header = "--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(Self.escape(name))\"; filename=\"\(Self.escape(filename))\"\r\n"
            + "Content-Type: \(contentType)\r\n\r\n"
        body += Array(header.utf8)
        body += bytes
        body += Array("\r\n".utf8)
    }

    /// The whole body, closing boundary included.
    public func encoded() -> [UInt8] {
        body + Array("--\(boundary)--\r\n".utf8)
    }

    /// Percent-encodes `"`, CR and LF in a name or file name (HTML's multipart/form-data encoding).
    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
