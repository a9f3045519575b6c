/// A failure while reading, decoding, resizing or writing an image.
///
/// The description is for people: it names the file, says what went wrong and what to do next.
/// ``code``, ``file`` and ``detail`` are for programs.
public struct ImagingError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure this is.
    public enum Code: String, Sendable, Equatable {
        /// The file could not be opened or read.
        case unreadableFile
        /// The file holds no bytes.
        case emptyFile
        /// The bytes are not a JPEG (for example a PNG, or random bytes named `.jpg`).
        case notJPEG
        /// The JPEG data ends before the image does.
        case truncated
        /// libjpeg rejected the data.
        case corrupt
        /// The header claims more pixels than allowed; nothing was allocated.
        case tooManyPixels
        /// A JPEG feature bookpipe does not handle (CMYK, for example).
        case unsupported
        /// Encoding the output failed.
        case encodeFailed
        /// The output file could not be written.
        case unwritableFile
        /// A file is already where the output would go, and replacing it was not allowed.
        case outputExists
        /// An argument does not fit the image.
        case invalidArgument
    }

    /// What kind of failure this is.
    public let code: Code
    /// The file (or other source name) the failure concerns.
    public let file: String
    /// The underlying message, from libjpeg, TurboJPEG or the system, if any.
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, file: String, detail: String = "") {
        self.code = code
        self.file = file
        self.detail = detail
    }

    /// A message for people: where, what, and what next.
    public var description: String {
        let suffix = detail.isEmpty ? "" : " (\(detail))"
        switch code {
        case .unreadableFile:
            return "\(file): cannot read the file\(suffix). Check the path and its permissions."
        case .emptyFile:
            return "\(file): the file is empty (0 bytes). Copy the photo again."
        case .notJPEG:
            return "\(file): not a JPEG file\(suffix). Convert it to JPEG first; bookpipe reads JPEG photos only."
        case .truncated:
            return "\(file): the JPEG data ends before the image does\(suffix). The file is cut off; copy it again."
        case .corrupt:
            return "\(file): the JPEG data is corrupt\(suffix). Re-export the photo."
        case .tooManyPixels:
            // No option is named here: only some commands have one (`image`'s --max-pixels adds it).
            return "\(file): the image is too large\(suffix). Nothing was decoded; if it is a real photo, shrink it below the limit first."
        case .unsupported:
            return "\(file): unsupported JPEG\(suffix). Re-save it as an RGB (YCbCr) JPEG."
        case .encodeFailed:
            return "\(file): JPEG encoding failed\(suffix)."
        case .unwritableFile:
            return "\(file): cannot write the file\(suffix). Check that the folder exists and is writable."
        case .outputExists:
            return "\(file): a file is already there; it was left as it was."
        case .invalidArgument:
            return "\(file): \(detail.isEmpty ? "invalid argument" : detail)."
        }
    }
}
