internal import CTurboJPEG

/// Encodes RGB8 pictures as baseline JPEG with TurboJPEG (4:2:0 chroma, accurate DCT).
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
        var output: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let sampling = subsamplesChroma ? TJSAMP_420 : TJSAMP_444
        let code = tjCompress2(handle, pixels, Int32(width), Int32(width * 3), Int32(height),
                               Int32(TJPF_RGB.rawValue), &output, &size, Int32(sampling.rawValue),
                               Int32(quality), 0)
        defer { if let output { tjFree(output) } }
        guard code == 0, let output else {
            let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown error"
            throw ImagingError(.encodeFailed, file: file, detail: message)
        }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }
}
