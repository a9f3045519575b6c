internal import CJPEGShim

/// JPEG files with a restart marker at the start of every MCU row, so a crop decodes only the rows
/// it needs.
///
/// A baseline JPEG is one stream of Huffman codes: to reach a spine at the bottom of a 12 MP
/// shelf photo, a decoder must read the codes of every row above it (three quarters of the file,
/// about 20 ms). A restart marker resets the decoder's state, so when every MCU row starts with
/// one, the rows a crop needs can be cut out of the file and decoded alone (the decoder does this
/// by itself when the markers are there: ``SpineCropper`` and ``ImageDecoder`` need no option).
///
/// ``addingRowRestarts(to:file:)`` re-encodes without loss: the same DCT coefficients, so every
/// decoded pixel is the same (`RowRestartsTests` compares whole decodes and crops), with the
/// standard Huffman tables and the file's APPn and COM markers (Exif with the orientation, ICC
/// profiles) copied as they are. The review queue keeps its managed photo copies in this form:
/// about 65 ms of CPU once per 12 MP photo at import, for crops that decode a fifth of the file
/// instead of all the rows above them.
///
/// ```swift
/// let copy = try RowRestarts.addingRowRestarts(to: try FileIO.read("shelf.jpg"), file: "shelf.jpg")
/// ```
public enum RowRestarts {
    /// The JPEG re-encoded without loss with a restart marker at every MCU row.
    /// - Parameters:
    ///   - jpeg: A JPEG file's bytes (baseline or progressive, Huffman-coded).
    ///   - file: The name used in errors.
    /// - Returns: The re-encoded file.
    /// - Throws: ``ImagingError``: `.truncated` when the data ends before the image does (a photo cut
    ///   off in a copy; libjpeg itself only warns and fills the rest with grey), `.corrupt` when the
    ///   file is not a readable JPEG or its coded data is damaged (bad Huffman codes, lost restart
    ///   markers: warnings that a decoder shrugs off are failures here), so a file that passes was
    ///   read whole. `.encodeFailed` when the file was read whole but the re-encode failed: the
    ///   original bytes are still a good photo then. Bytes after the end-of-image marker (some
    ///   cameras append data there) are ignored, not a failure.
    public static func addingRowRestarts(to jpeg: [UInt8], file: String) throws(ImagingError) -> [UInt8] {
        guard !jpeg.isEmpty else { throw ImagingError(.emptyFile, file: file) }
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let code = jpeg.withUnsafeBufferPointer { buffer in
            message.withUnsafeMutableBufferPointer { text in
                bookpipe_jpeg_add_row_restarts(buffer.baseAddress, buffer.count, &output, &count, text.baseAddress, text.count)
            }
        }
        defer { bookpipe_jpeg_free(output) }
        guard code == Int32(BOOKPIPE_JPEG_OK), let output else {
            throw ImageDecoder.error(code: code, message: message, file: file)
        }
        return Array(UnsafeBufferPointer(start: output, count: count))
    }
}
