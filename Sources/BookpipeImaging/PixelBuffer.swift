/// An RGB image with 8 bits per channel, rows stored top to bottom without padding.
///
/// A value type: copies share storage until one is changed.
public struct PixelBuffer: Sendable, Equatable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height * 3` bytes: R, G, B for each pixel, row by row.
    public internal(set) var bytes: [UInt8]

    /// Creates a buffer from packed RGB bytes.
    ///
    /// - Throws: ``ImagingError`` (`.invalidArgument`) when `bytes.count` is not `width * height * 3`.
    public init(width: Int, height: Int, bytes: [UInt8]) throws(ImagingError) {
        guard width > 0, height > 0, bytes.count == width * height * 3 else {
            throw ImagingError(.invalidArgument, file: "pixel buffer",
                               detail: "\(bytes.count) bytes do not make a \(width)x\(height) RGB image")
        }
        self.width = width
        self.height = height
        self.bytes = bytes
    }

    /// Creates a buffer filled with one colour.
    public init(width: Int, height: Int, red: UInt8, green: UInt8, blue: UInt8) {
        self.width = max(width, 1)
        self.height = max(height, 1)
        var bytes = [UInt8](repeating: 0, count: self.width * self.height * 3)
        for index in stride(from: 0, to: bytes.count, by: 3) {
            bytes[index] = red
            bytes[index + 1] = green
            bytes[index + 2] = blue
        }
        self.bytes = bytes
    }

    /// Creates a buffer whose bytes are written by `initializer` (which must write all of them).
    init(width: Int, height: Int, initializingWith initializer: (UnsafeMutableBufferPointer<UInt8>) throws(ImagingError) -> Void) throws(ImagingError) {
        self.width = width
        self.height = height
        let count = width * height * 3
        var failure: ImagingError?
        self.bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            do throws(ImagingError) {
                try initializer(buffer)
                initialized = count
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw failure }
    }

    /// The colour at (`x`, `y`), or nil outside the image.
    public func pixel(x: Int, y: Int) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        guard x >= 0, y >= 0, x < width, y < height else { return nil }
        let index = (y * width + x) * 3
        return (bytes[index], bytes[index + 1], bytes[index + 2])
    }

    /// Sets the colour at (`x`, `y`); does nothing outside the image.
    public mutating func setPixel(x: Int, y: Int, red: UInt8, green: UInt8, blue: UInt8) {
        guard x >= 0, y >= 0, x < width, y < height else { return }
        let index = (y * width + x) * 3
        bytes[index] = red
        bytes[index + 1] = green
        bytes[index + 2] = blue
    }

    /// The pixels inside `rect` (clamped to the image) as a new buffer.
    public func cropped(to rect: PixelRect) -> PixelBuffer {
        let clamped = rect.clamped(width: width, height: height)
        var result = PixelBuffer(width: clamped.width, height: clamped.height, red: 0, green: 0, blue: 0)
        let rowBytes = clamped.width * 3
        result.bytes.withUnsafeMutableBufferPointer { target in
            bytes.withUnsafeBufferPointer { source in
                guard let to = target.baseAddress, let from = source.baseAddress else { return }
                for row in 0..<clamped.height {
                    (to + row * rowBytes).update(from: from + ((clamped.y + row) * width + clamped.x) * 3,
                                                 count: rowBytes)
                }
            }
        }
        return result
    }
}
