internal import CTurboJPEG
internal import CJPEGShim

/// Encodes RGB8 pictures as baseline JPEG with TurboJPEG (4:2:0 chroma; TurboJPEG's defaults:
/// libjpeg-turbo's fast integer DCT below quality 96, the accurate one from 96, no optimised
/// Huffman pass).
///
/// ```swift
/// let bytes = try JPEGEncoder(quality: 85).encode(picture)
/// ```
public struct JPEGEncoder: Sendable {
    /// JPEG quality, 1…100.
    public var quality: Int
    /// Whether colour is stored at half resolution in both directions (4:2:0, as cameras do) or
    /// at full resolution (4:4:4).
    public var subsamplesChroma: Bool

    /// Creates an encoder.
    public init(quality: Int = 85, subsamplesChroma: Bool = true) {
        self.quality = quality
        self.subsamplesChroma = subsamplesChroma
    }

    /// The JPEG file for `image`.
    ///
    /// - Throws: ``ImagingError`` `.encodeFailed` with TurboJPEG's message, or
    ///   `.invalidArgument` for a quality outside 1…100.
    public func encode(_ image: PixelBuffer, file: String = "output") throws(ImagingError) -> [UInt8] {
        try image.bytes.withUnsafeBufferPointer { buffer throws(ImagingError) in
            guard let base = buffer.baseAddress else {
                throw ImagingError(.encodeFailed, file: file, detail: "empty picture")
            }
            return try encode(base, width: image.width, height: image.height, file: file)
        }
    }

    func encode(_ pixels: UnsafePointer<UInt8>, width: Int, height: Int, file: String) throws(ImagingError) -> [UInt8] {
        guard (1...100).contains(quality) else {
            throw ImagingError(.invalidArgument, file: file, detail: "JPEG quality \(quality) is not within 1…100")
        }
        guard let handle = tjInitCompress() else {
            throw ImagingError(.encodeFailed, file: file, detail: "could not create a TurboJPEG compressor")
        }
        defer { tjDestroy(handle) }
        let sampling = subsamplesChroma ? TJSAMP_420 : TJSAMP_444
        // TurboJPEG writes straight into the array's storage (sized for the worst case; only
        // the pages it writes become resident), so the file is not copied afterwards.
        let capacity = Int(tjBufSize(Int32(width), Int32(height), Int32(sampling.rawValue)))
        var failure: String?
        let jpeg = [UInt8](unsafeUninitializedCapacity: max(capacity, 1)) { buffer, initialized in
            initialized = 0
            var output = buffer.baseAddress
            var size = UInt(buffer.count)
            let code = tjCompress2(handle, pixels, Int32(width), Int32(width * 3), Int32(height),
                                   Int32(TJPF_RGB.rawValue), &output, &size, Int32(sampling.rawValue),
                                   Int32(quality), TJFLAG_NOREALLOC)
            if code != 0 || output != buffer.baseAddress || Int(size) > buffer.count {
                failure = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
                return
            }
            initialized = Int(size)
        }
        if let failure { throw ImagingError(.encodeFailed, file: file, detail: failure) }
        return jpeg
    }
}

/// A JPEG encode fed one row at a time (libjpeg's compressor through the C shim, with the same
/// settings as ``JPEGEncoder``), so the output picture is never held whole.
final class RowEncoder {
    private let handle: OpaquePointer
    private let file: String
    private var message = [CChar](repeating: 0, count: 256)

    /// Starts a `width` × `height` encode at `quality` (4:2:0 when `subsamplesChroma`).
    init(width: Int, height: Int, quality: Int, subsamplesChroma: Bool = true, file: String) throws(ImagingError) {
        guard (1...100).contains(quality) else {
            throw ImagingError(.invalidArgument, file: file, detail: "JPEG quality \(quality) is not within 1…100")
        }
        self.file = file
        let handle = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_encoder_start(Int32(width), Int32(height), Int32(quality), subsamplesChroma ? 1 : 0,
                                        text.baseAddress, text.count)
        }
        guard let handle else { throw ImagingError(.encodeFailed, file: file, detail: Self.text(message)) }
        self.handle = handle
    }

    deinit { bookpipe_jpeg_encoder_destroy(handle) }

    /// Encodes the next row (`width * 3` bytes).
    func write(_ row: UnsafePointer<UInt8>) throws(ImagingError) {
        let handle = self.handle
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_encoder_write_rows(handle, row, 0, 1, text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) { throw ImagingError(.encodeFailed, file: file, detail: Self.text(message)) }
    }

    /// Ends the file after the last row and returns it.
    func finish() throws(ImagingError) -> [UInt8] {
        let handle = self.handle
        var data: UnsafePointer<UInt8>?
        var size = 0
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_encoder_finish(handle, &data, &size, text.baseAddress, text.count)
        }
        guard code == Int32(BOOKPIPE_JPEG_OK), let data else {
            throw ImagingError(.encodeFailed, file: file, detail: Self.text(message))
        }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
