/// A box in an upright picture, in fractions of its width and height (0…1).
///
/// Bookpipe's own small type, so that the imaging core does not depend on BookpipeCore;
/// convert from `BoundingBox` at the call site.
public struct NormalizedBox: Sendable, Hashable, Codable {
    /// Left edge, 0 = left side of the picture.
    public var x: Double
    /// Top edge, 0 = top of the picture.
    public var y: Double
    /// Width as a fraction of the picture's width.
    public var width: Double
    /// Height as a fraction of the picture's height.
    public var height: Double

    /// Creates a box.
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The whole picture.
    public static let whole = NormalizedBox(x: 0, y: 0, width: 1, height: 1)
}

/// A rectangle of whole pixels.
public struct PixelRect: Sendable, Hashable {
    /// Left column.
    public var x: Int
    /// Top row.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The part of this rectangle inside a `width` × `height` picture (at least 1×1).
    public func clamped(width imageWidth: Int, height imageHeight: Int) -> PixelRect {
        let left = min(max(x, 0), imageWidth - 1)
        let top = min(max(y, 0), imageHeight - 1)
        let right = max(min(x + width, imageWidth), left + 1)
        let bottom = max(min(y + height, imageHeight), top + 1)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// The smallest rectangle holding both.
    func union(_ other: PixelRect) -> PixelRect {
        let left = min(x, other.x), top = min(y, other.y)
        let right = max(x + width, other.x + other.width), bottom = max(y + height, other.y + other.height)
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

/// The pixels a ``NormalizedBox`` selects in a picture of a given size.
///
/// Edges are rounded to the nearest pixel (so 0.25…0.5 of 4032 px is columns 1008..<2016) and
/// clamped to the picture; a box that rounds to nothing keeps one pixel. A box that is not
/// valid — NaN or infinite, negative or zero size, or entirely outside the picture — selects
/// the whole picture, and ``note`` says so.
public struct CropRectangle: Sendable, Hashable {
    /// The selected pixels.
    public let rect: PixelRect
    /// Why the box was replaced by the whole picture, or nil when it was used.
    public let note: String?

    /// Whether the box was invalid and the whole picture was selected instead.
    public var isWholePictureFallback: Bool { note != nil }

    /// Resolves `box` in a `width` × `height` upright picture.
    public init(box: NormalizedBox, width: Int, height: Int) {
        let whole = PixelRect(x: 0, y: 0, width: max(width, 1), height: max(height, 1))
        let values = [box.x, box.y, box.width, box.height]
        if values.contains(where: { !$0.isFinite }) {
            self.rect = whole
            self.note = "box \(CropRectangle.describe(box)) has a value that is not a number; used the whole picture"
            return
        }
        if box.width <= 0 || box.height <= 0 {
            self.rect = whole
            self.note = "box \(CropRectangle.describe(box)) has no area; used the whole picture"
            return
        }
        if box.x >= 1 || box.y >= 1 || box.x + box.width <= 0 || box.y + box.height <= 0 {
            self.rect = whole
            self.note = "box \(CropRectangle.describe(box)) lies outside the picture; used the whole picture"
            return
        }
        let w = Double(width), h = Double(height)
        func unit(_ value: Double) -> Double { max(0, min(value, 1)) }
        let left = Int((unit(box.x) * w).rounded())
        let top = Int((unit(box.y) * h).rounded())
        var right = Int((unit(box.x + box.width) * w).rounded())
        var bottom = Int((unit(box.y + box.height) * h).rounded())
        if right <= left { right = min(left + 1, width) }
        if bottom <= top { bottom = min(top + 1, height) }
        let clampedLeft = min(left, width - 1), clampedTop = min(top, height - 1)
        self.rect = PixelRect(x: clampedLeft, y: clampedTop,
                              width: max(right - clampedLeft, 1), height: max(bottom - clampedTop, 1))
        self.note = nil
    }

    private static func describe(_ box: NormalizedBox) -> String {
        "{x: \(box.x), y: \(box.y), width: \(box.width), height: \(box.height)}"
    }
}
