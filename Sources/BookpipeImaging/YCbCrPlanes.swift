internal import CJPEGShim

/// An upright picture held as JPEG's YCbCr 4:2:0 planes: 1.5 bytes a pixel instead of RGB's 3.
///
/// Lines (upright rows, or upright columns for photos whose EXIF orientation swaps the sides)
/// are added one at a time as the resizer produces them; each is converted and its chroma
/// averaged exactly as libjpeg does (the C shim's `bookpipe_ycc_planes`), so
/// ``encode(quality:)`` writes the same file, byte for byte, as ``JPEGEncoder`` with 4:2:0 chroma
/// would for the RGB picture, while holding half the memory. It can be encoded any number of
/// times (the size targeting's re-encodes).
///
/// Owns C memory, freed in `deinit`; used by one task at a time.
final class YCbCrPlanes {
    private let handle: OpaquePointer
    private let file: String
    /// Upright width in pixels.
    let width: Int
    /// Upright height in pixels.
    let height: Int
    /// Whether the lines are columns (top to bottom) rather than rows (left to right).
    let linesAreColumns: Bool

    /// Allocates the planes of a `width` × `height` upright picture.
    ///
    /// - Throws: ``ImagingError`` `.encodeFailed` when the memory cannot be had.
    init(width: Int, height: Int, linesAreColumns: Bool, file: String) throws(ImagingError) {
        guard width > 0, height > 0,
              let handle = bookpipe_ycc_planes_create(Int32(width), Int32(height), linesAreColumns ? 1 : 0) else {
            throw ImagingError(.encodeFailed, file: file, detail: "no memory for a \(width)x\(height) picture")
        }
        self.handle = handle
        self.file = file
        self.width = width
        self.height = height
        self.linesAreColumns = linesAreColumns
    }

    deinit { bookpipe_ycc_planes_destroy(handle) }

    /// Adds line `index` from packed RGB8 `pixels` in upright order (`width` pixels for a row,
    /// `height` for a column). Lines must come in increasing or decreasing order, each once.
    func putLine(_ index: Int, pixels: UnsafePointer<UInt8>) throws(ImagingError) {
        let code = bookpipe_ycc_planes_put_line(handle, Int32(index), pixels, 3)
        if code != Int32(BOOKPIPE_JPEG_OK) {
            throw ImagingError(.encodeFailed, file: file, detail: "line \(index) is out of range or out of order")
        }
    }

    /// Whether every line has been added.
    var isComplete: Bool { bookpipe_ycc_planes_complete(handle) != 0 }

    /// The JPEG file at `quality` (4:2:0, TurboJPEG's settings).
    ///
    /// - Throws: ``ImagingError`` `.invalidArgument` for a quality outside 1…100, `.encodeFailed`
    ///   when lines are missing or libjpeg fails.
    func encode(quality: Int) throws(ImagingError) -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw ImagingError(.invalidArgument, file: file, detail: "JPEG quality \(quality) is not within 1…100")
        }
        var message = [CChar](repeating: 0, count: 256)
        let handle = self.handle
        let encoder = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_encode_planes(handle, Int32(quality), text.baseAddress, text.count)
        }
        guard let encoder else {
            let text = String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImagingError(.encodeFailed, file: file, detail: text)
        }
        defer { bookpipe_jpeg_encoder_destroy(encoder) }
        var data: UnsafePointer<UInt8>?
        var size = 0
        bookpipe_jpeg_encoder_output(encoder, &data, &size)
        guard let data else { throw ImagingError(.encodeFailed, file: file, detail: "no output") }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }
}

@available(*, unavailable)
extension YCbCrPlanes: Sendable {}
