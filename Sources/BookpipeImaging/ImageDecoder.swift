internal import CJPEGShim

/// What a JPEG's header says, read without decoding any pixels.
public struct JPEGHeader: Sendable, Equatable {
    /// Width of the stored pixels.
    public let storedWidth: Int
    /// Height of the stored pixels.
    public let storedHeight: Int
    /// The EXIF orientation (``Orientation/topLeft`` when the file has none).
    public let orientation: Orientation
    /// Colour components in the file (1 grey, 3 colour).
    public let components: Int

    /// Width of the upright picture (after applying ``orientation``).
    public var width: Int { orientation.swapsDimensions ? storedHeight : storedWidth }
    /// Height of the upright picture (after applying ``orientation``).
    public var height: Int { orientation.swapsDimensions ? storedWidth : storedHeight }
    /// Number of pixels.
    public var pixelCount: Int { storedWidth * storedHeight }
}

/// A DCT scaling factor for libjpeg's shrink-on-load: the decoder produces 1/n of each side.
///
/// Shrinking on load is fast but sharpens and aliases a little; bookpipe only uses it when
/// at least a 2× reduction is left for the resize filter afterwards (the rule libvips uses).
public enum DecodeScale: Int, Sendable, CaseIterable, Comparable {
    /// Every pixel.
    case full = 1
    /// Half of each side.
    case half = 2
    /// A quarter of each side.
    case quarter = 4
    /// An eighth of each side.
    case eighth = 8

    /// The denominator n of 1/n.
    public var denominator: Int { rawValue }

    /// The size libjpeg produces for a side of `length` pixels: ceil(length / n).
    public func scaled(_ length: Int) -> Int { (length + rawValue - 1) / rawValue }

    /// The largest shrink-on-load that still leaves at least 2× for the resize filter, for a
    /// total reduction of `reduction` (input size / output size, the smaller of both axes):
    /// 1/8 from 16×, 1/4 from 8×, 1/2 from 4×, else full size.
    public static func shrinkOnLoad(forReduction reduction: Double) -> DecodeScale {
        if reduction >= 16 { return .eighth }
        if reduction >= 8 { return .quarter }
        if reduction >= 4 { return .half }
        return .full
    }

    public static func < (lhs: DecodeScale, rhs: DecodeScale) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Decodes JPEG photos with libjpeg-turbo, refusing decompression bombs, truncated files and
/// anything that is not a JPEG before allocating pixel memory.
///
/// ```swift
/// let decoder = ImageDecoder()
/// let header = try decoder.header(of: bytes, file: "shelf.jpg")
/// let upright = try decoder.decode(bytes, file: "shelf.jpg", scale: .half)
/// ```
public struct ImageDecoder: Sendable {
    /// The largest number of pixels a header may claim (default 100 million).
    public var maxPixels: Int

    /// Creates a decoder that refuses pictures with more than `maxPixels` pixels.
    public init(maxPixels: Int = 100_000_000) {
        self.maxPixels = maxPixels
    }

    /// Reads the header and EXIF orientation, and checks the guards.
    ///
    /// - Parameters:
    ///   - bytes: the whole JPEG file.
    ///   - file: the name used in error messages.
    /// - Throws: ``ImagingError`` `.emptyFile`, `.notJPEG`, `.corrupt`, `.unsupported` (CMYK) or
    ///   `.tooManyPixels` (checked before any pixel memory is allocated).
    public func header(of bytes: [UInt8], file: String) throws(ImagingError) -> JPEGHeader {
        try bytes.withUnsafeBufferPointer { buffer throws(ImagingError) in
            try header(of: buffer, file: file)
        }
    }

    func header(of buffer: UnsafeBufferPointer<UInt8>, file: String) throws(ImagingError) -> JPEGHeader {
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            throw ImagingError(.emptyFile, file: file)
        }
        guard buffer.count >= 3, buffer[0] == 0xFF, buffer[1] == 0xD8, buffer[2] == 0xFF else {
            throw ImagingError(.notJPEG, file: file, detail: ImageDecoder.describeStart(buffer))
        }
        var info = bookpipe_jpeg_header()
        var message = [CChar](repeating: 0, count: 256)
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_read_header(base, buffer.count, &info, text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) {
            throw ImageDecoder.error(code: code, message: message, file: file)
        }
        let orientation = EXIFReader.orientation(in: buffer)
        let header = JPEGHeader(storedWidth: Int(info.width), storedHeight: Int(info.height),
                                orientation: orientation, components: Int(info.components))
        if header.storedWidth <= 0 || header.storedHeight <= 0 {
            throw ImagingError(.corrupt, file: file, detail: "the header says \(header.storedWidth)x\(header.storedHeight)")
        }
        if header.pixelCount > maxPixels {
            throw ImagingError(.tooManyPixels, file: file,
                               detail: "the header claims \(header.storedWidth)x\(header.storedHeight) = \(header.pixelCount) pixels; the limit is \(maxPixels)")
        }
        if header.components != 1 && header.components != 3 {
            throw ImagingError(.unsupported, file: file, detail: "\(header.components) colour components (CMYK?)")
        }
        return header
    }

    /// Decodes the upright picture, or the part of it inside `box`, at a DCT scale.
    ///
    /// Only the rows and columns the box needs are decoded. The result is turned upright
    /// according to the EXIF orientation.
    ///
    /// - Parameters:
    ///   - bytes: the whole JPEG file.
    ///   - file: the name used in error messages.
    ///   - scale: shrink-on-load factor.
    ///   - box: the part of the upright picture to decode (see ``CropRectangle`` for how it is
    ///     rounded and what an invalid box does); nil for the whole picture.
    /// - Throws: ``ImagingError``: every guard of ``header(of:file:)``, plus `.truncated` when
    ///   the data ends early and `.corrupt` when libjpeg gives up.
    public func decode(_ bytes: [UInt8], file: String, scale: DecodeScale = .full,
                       box: NormalizedBox? = nil) throws(ImagingError) -> PixelBuffer {
        try bytes.withUnsafeBufferPointer { buffer throws(ImagingError) in
            let header = try header(of: buffer, file: file)
            let region = storedRegion(for: box ?? .whole, header: header, scale: scale)
            let stored = try decodeStored(buffer, file: file, header: header, scale: scale, region: region)
            return stored.uprighted(header.orientation)
        }
    }

    /// Decodes stored pixels (not turned upright) of `region`, given in pixels of the image
    /// decoded at `scale`; nil for all of them.
    ///
    /// - Throws: ``ImagingError`` as ``decode(_:file:scale:box:)``, and `.invalidArgument`
    ///   when the region does not fit.
    public func decodeStored(_ bytes: [UInt8], file: String, scale: DecodeScale = .full,
                             region: PixelRect? = nil) throws(ImagingError) -> PixelBuffer {
        try bytes.withUnsafeBufferPointer { buffer throws(ImagingError) in
            let header = try header(of: buffer, file: file)
            let full = PixelRect(x: 0, y: 0, width: scale.scaled(header.storedWidth), height: scale.scaled(header.storedHeight))
            return try decodeStored(buffer, file: file, header: header, scale: scale, region: region ?? full)
        }
    }

    /// The stored-pixel rectangle, at `scale`, that holds the upright `box`.
    func storedRegion(for box: NormalizedBox, header: JPEGHeader, scale: DecodeScale) -> PixelRect {
        let crop = CropRectangle(box: box, width: header.width, height: header.height)
        let stored = header.orientation.storedRect(forUpright: crop.rect, uprightWidth: header.width, uprightHeight: header.height)
        return ImageDecoder.scaledRect(stored, scale: scale, width: header.storedWidth, height: header.storedHeight)
    }

    /// `rect` (full-size pixels) in the pixels of the picture decoded at `scale`.
    static func scaledRect(_ rect: PixelRect, scale: DecodeScale, width: Int, height: Int) -> PixelRect {
        if scale == .full { return rect }
        let d = Double(scale.denominator)
        let left = Int((Double(rect.x) / d).rounded(.down))
        let top = Int((Double(rect.y) / d).rounded(.down))
        let right = Int((Double(rect.x + rect.width) / d).rounded(.up))
        let bottom = Int((Double(rect.y + rect.height) / d).rounded(.up))
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
            .clamped(width: scale.scaled(width), height: scale.scaled(height))
    }

    func decodeStored(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader,
                      scale: DecodeScale, region: PixelRect) throws(ImagingError) -> PixelBuffer {
        let stream = try RowStream(buffer, file: file, header: header, scale: scale, region: region)
        return try PixelBuffer(width: region.width, height: region.height) { pixels throws(ImagingError) in
            guard let base = pixels.baseAddress else { return }
            try stream.read(into: base, stride: region.width * 3, count: region.height)
            try stream.finish()
        }
    }

    static func describeStart(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
        let start = buffer.prefix(4).map { byte in
            let hex = String(byte, radix: 16, uppercase: true)
            return "0x" + (hex.count == 1 ? "0" + hex : hex)
        }.joined(separator: " ")
        if buffer.count >= 4, buffer[0] == 0x89, buffer[1] == 0x50, buffer[2] == 0x4E, buffer[3] == 0x47 {
            return "it is a PNG file (starts with \(start))"
        }
        if buffer.count < 3 { return "only \(buffer.count) bytes: \(start)" }
        return "starts with \(start), not 0xFF 0xD8 0xFF"
    }

    static func error(code: Int32, message: [CChar], file: String) -> ImagingError {
        let text = String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch code {
        case Int32(BOOKPIPE_JPEG_TRUNCATED): return ImagingError(.truncated, file: file, detail: text)
        case Int32(BOOKPIPE_JPEG_BAD_ARGUMENT): return ImagingError(.invalidArgument, file: file, detail: text)
        case Int32(BOOKPIPE_JPEG_ENCODE_FAILED): return ImagingError(.encodeFailed, file: file, detail: text)
        default:
            if text.hasPrefix("Not a JPEG file") { return ImagingError(.notJPEG, file: file, detail: text) }
            if text.contains("Unsupported color conversion") { return ImagingError(.unsupported, file: file, detail: text) }
            return ImagingError(.corrupt, file: file, detail: text)
        }
    }
}

/// A libjpeg decode in progress, handing out the rows of a region top to bottom.
///
/// Owns the C decoder and frees it in `deinit`; it belongs to one task at a time and is not
/// Sendable. The JPEG bytes must stay valid for the stream's lifetime.
final class RowStream {
    private let handle: OpaquePointer
    private let file: String
    /// Width of the region in pixels.
    let width: Int
    /// Height of the region in pixels.
    let height: Int
    private var message = [CChar](repeating: 0, count: 256)

    init(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
         region: PixelRect) throws(ImagingError) {
        guard let handle = bookpipe_jpeg_decoder_create() else {
            throw ImagingError(.corrupt, file: file, detail: "could not create a libjpeg decoder (out of memory)")
        }
        self.handle = handle
        self.file = file
        self.width = region.width
        self.height = region.height
        guard let base = buffer.baseAddress else { throw ImagingError(.emptyFile, file: file) }
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_decoder_start(handle, base, buffer.count, Int32(scale.denominator),
                                        Int32(scale.scaled(header.storedWidth)), Int32(scale.scaled(header.storedHeight)),
                                        Int32(region.x), Int32(region.y), Int32(region.width), Int32(region.height),
                                        text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) { throw ImageDecoder.error(code: code, message: message, file: file) }
    }

    deinit { bookpipe_jpeg_decoder_destroy(handle) }

    /// The file name used in errors.
    var fileName: String { file }

    /// Calls `body` with the C decoder (for a ``RowPump``, which then owns it until finished).
    func withHandle<T>(_ body: (OpaquePointer) -> T) -> T { body(handle) }

    /// Reads the next `count` rows into `target`, rows `stride` bytes apart.
    func read(into target: UnsafeMutablePointer<UInt8>, stride: Int, count: Int) throws(ImagingError) {
        let handle = self.handle
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_decoder_read_rows(handle, target, stride, Int32(count), text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) { throw ImageDecoder.error(code: code, message: message, file: file) }
    }

    /// Ends the decode (reading on to the end of the data when every row was read).
    func finish() throws(ImagingError) {
        let handle = self.handle
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_jpeg_decoder_finish(handle, text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) { throw ImageDecoder.error(code: code, message: message, file: file) }
    }
}

/// Rows of a ``RowStream`` decoded on a background thread (the C shim's row pump), so the caller
/// can resize earlier rows while later ones decode on the other core.
///
/// Holds the stream until ``finish()`` (or `deinit`) has stopped and joined the thread; rows must
/// be asked for in increasing order.
final class RowPump {
    private let stream: RowStream
    private var handle: OpaquePointer?

    /// Starts decoding the next `rows` rows of `stream` into a ring of `ringRows` rows. Nil when
    /// no thread could be started; the caller then reads the stream itself.
    init?(_ stream: RowStream, rows: Int, ringRows: Int) {
        self.stream = stream
        let rowBytes = stream.width * 3
        let ring = Int32(min(max(ringRows, 1), rows))
        guard let handle = stream.withHandle({ bookpipe_row_pump_start($0, Int32(rows), rowBytes, ring) }) else {
            return nil
        }
        self.handle = handle
    }

    deinit {
        if let handle { _ = bookpipe_row_pump_finish(handle, nil, 0) }
    }

    /// The row `index`, once decoded; valid until the next call. Throws the decoder's error when
    /// decoding failed.
    func row(_ index: Int) throws(ImagingError) -> UnsafePointer<UInt8> {
        guard let handle, let pointer = bookpipe_row_pump_row(handle, Int32(index)) else {
            try finish()
            throw ImagingError(.corrupt, file: stream.fileName, detail: "row \(index) could not be decoded")
        }
        return pointer
    }

    /// Stops (if rows are left) and joins the decoding thread; throws what the decoder reported.
    func finish() throws(ImagingError) {
        guard let handle else { return }
        self.handle = nil
        var message = [CChar](repeating: 0, count: 256)
        let code = message.withUnsafeMutableBufferPointer { text in
            bookpipe_row_pump_finish(handle, text.baseAddress, text.count)
        }
        if code != Int32(BOOKPIPE_JPEG_OK) {
            throw ImageDecoder.error(code: code, message: message, file: stream.fileName)
        }
    }
}
