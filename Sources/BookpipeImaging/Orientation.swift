/// The EXIF orientation of a photo: how the stored pixels must be turned to show it upright.
///
/// Phone cameras store the sensor's landscape image and record the turn in EXIF tag 0x0112.
/// The case names follow TIFF: the first word is where the stored image's row 0 ends up, the
/// second where its column 0 ends up.
public enum Orientation: Int, Sendable, CaseIterable, Equatable {
    /// 1: stored upright.
    case topLeft = 1
    /// 2: mirrored left to right.
    case topRight = 2
    /// 3: turned 180°.
    case bottomRight = 3
    /// 4: mirrored top to bottom.
    case bottomLeft = 4
    /// 5: mirrored along the main diagonal (transposed).
    case leftTop = 5
    /// 6: must be turned 90° clockwise to show upright (a phone held upright).
    case rightTop = 6
    /// 7: mirrored along the other diagonal (transversed).
    case rightBottom = 7
    /// 8: must be turned 90° counter-clockwise to show upright.
    case leftBottom = 8

    /// Whether width and height swap between the stored and the upright picture.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The upright size of a stored `width` × `height` picture.
    public func uprightSize(width: Int, height: Int) -> (width: Int, height: Int) {
        swapsDimensions ? (height, width) : (width, height)
    }

    /// Maps a box in the upright picture (normalised 0…1) to the same pixels in the stored picture.
    func storedBox(forUpright box: NormalizedBox) -> NormalizedBox {
        let (x, y, w, h) = (box.x, box.y, box.width, box.height)
        switch self {
        case .topLeft: return box
        case .topRight: return NormalizedBox(x: 1 - x - w, y: y, width: w, height: h)
        case .bottomRight: return NormalizedBox(x: 1 - x - w, y: 1 - y - h, width: w, height: h)
        case .bottomLeft: return NormalizedBox(x: x, y: 1 - y - h, width: w, height: h)
        case .leftTop: return NormalizedBox(x: y, y: x, width: h, height: w)
        case .rightTop: return NormalizedBox(x: y, y: 1 - x - w, width: h, height: w)
        case .rightBottom: return NormalizedBox(x: 1 - y - h, y: 1 - x - w, width: h, height: w)
        case .leftBottom: return NormalizedBox(x: 1 - y - h, y: x, width: h, height: w)
        }
    }

    /// Maps a pixel rectangle of the upright picture (`uprightWidth` × `uprightHeight`) to the
    /// same pixels in the stored picture.
    func storedRect(forUpright rect: PixelRect, uprightWidth: Int, uprightHeight: Int) -> PixelRect {
        let (x, y, w, h) = (rect.x, rect.y, rect.width, rect.height)
        let (uw, uh) = (uprightWidth, uprightHeight)
        switch self {
        case .topLeft: return rect
        case .topRight: return PixelRect(x: uw - x - w, y: y, width: w, height: h)
        case .bottomRight: return PixelRect(x: uw - x - w, y: uh - y - h, width: w, height: h)
        case .bottomLeft: return PixelRect(x: x, y: uh - y - h, width: w, height: h)
        case .leftTop: return PixelRect(x: y, y: x, width: h, height: w)
        case .rightTop: return PixelRect(x: y, y: uw - x - w, width: h, height: w)
        case .rightBottom: return PixelRect(x: uh - y - h, y: uw - x - w, width: h, height: w)
        case .leftBottom: return PixelRect(x: uh - y - h, y: x, width: h, height: w)
        }
    }

    /// The upright line that stored row `y` (of a picture `storedHeight` rows high) becomes: a row,
    /// or a column when ``swapsDimensions``; `reversed` when its pixels run right to left (or
    /// bottom to top) in the upright picture.
    func uprightLine(storedRow y: Int, storedHeight sh: Int) -> (index: Int, reversed: Bool) {
        switch self {
        case .topLeft, .leftTop: return (y, false)
        case .topRight, .leftBottom: return (y, true)
        case .bottomLeft, .rightTop: return (sh - 1 - y, false)
        case .bottomRight, .rightBottom: return (sh - 1 - y, true)
        }
    }

    /// Where stored pixel (x, y) of a stored `width` × `height` picture lands in the upright
    /// picture, as a byte offset for x = 0 and a byte step per x (both for RGB8, tightly packed).
    func uprightPlacement(row y: Int, storedWidth sw: Int, storedHeight sh: Int) -> (start: Int, step: Int) {
        let uprightWidth = swapsDimensions ? sh : sw
        func offset(_ u: Int, _ v: Int) -> Int { (v * uprightWidth + u) * 3 }
        switch self {
        case .topLeft: return (offset(0, y), 3)
        case .topRight: return (offset(sw - 1, y), -3)
        case .bottomRight: return (offset(sw - 1, sh - 1 - y), -3)
        case .bottomLeft: return (offset(0, sh - 1 - y), 3)
        case .leftTop: return (offset(y, 0), uprightWidth * 3)
        case .rightTop: return (offset(sh - 1 - y, 0), uprightWidth * 3)
        case .rightBottom: return (offset(sh - 1 - y, sw - 1), -uprightWidth * 3)
        case .leftBottom: return (offset(y, sw - 1), -uprightWidth * 3)
        }
    }
}

extension PixelBuffer {
    /// This stored picture turned upright according to `orientation`.
    public func uprighted(_ orientation: Orientation) -> PixelBuffer {
        if orientation == .topLeft { return self }
        let (uw, uh) = orientation.uprightSize(width: width, height: height)
        var result = PixelBuffer(width: uw, height: uh, red: 0, green: 0, blue: 0)
        result.bytes.withUnsafeMutableBufferPointer { target in
            bytes.withUnsafeBufferPointer { source in
                guard let to = target.baseAddress, let from = source.baseAddress else { return }
                for y in 0..<height {
                    let (start, step) = orientation.uprightPlacement(row: y, storedWidth: width, storedHeight: height)
                    var out = start
                    var index = y * width * 3
                    for _ in 0..<width {
                        to[out] = from[index]
                        to[out + 1] = from[index + 1]
                        to[out + 2] = from[index + 2]
                        out += step
                        index += 3
                    }
                }
            }
        }
        return result
    }
}

extension Orientation {
    /// The value of the EXIF orientation tag (0x0112) in a JPEG, or `nil` when it has none.
    ///
    /// Unlike ``ImageDecoder/header(of:file:)``, which reads a missing tag as
    /// ``Orientation/topLeft``, this tells a photo without the tag from one tagged upright, and
    /// returns a value outside 1…8 as it is. Used to check that an upload carries no tag.
    public static func exifTagValue(inJPEG bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { EXIFReader.orientationTag(in: $0) }
    }
}

/// Reads the EXIF orientation from a JPEG's APP1 segment.
enum EXIFReader {
    /// The orientation tag of the first APP1 "Exif" segment before the image data, or
    /// ``Orientation/topLeft`` when there is none or it cannot be read (a damaged EXIF block
    /// must not make a good photo unreadable).
    static func orientation(in bytes: UnsafeBufferPointer<UInt8>) -> Orientation {
        orientationTag(in: bytes, accepting: { Orientation(rawValue: $0) != nil })
            .flatMap(Orientation.init(rawValue:)) ?? .topLeft
    }

    /// The first orientation tag value (type SHORT) of an APP1 "Exif" segment before the image
    /// data that `accepting` accepts; `nil` when there is none.
    static func orientationTag(in bytes: UnsafeBufferPointer<UInt8>,
                               accepting: (Int) -> Bool = { _ in true }) -> Int? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var position = 2
        while position + 4 <= bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            let marker = bytes[position + 1]
            if marker == 0xFF { position += 1; continue }  // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { position += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan / end of image
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            guard length >= 2, position + 2 + length <= bytes.count else { return nil }
            let segment = position + 4
            let segmentEnd = position + 2 + length
            if marker == 0xE1, segmentEnd - segment >= 14,
               bytes[segment] == 0x45, bytes[segment + 1] == 0x78, bytes[segment + 2] == 0x69,
               bytes[segment + 3] == 0x66, bytes[segment + 4] == 0, bytes[segment + 5] == 0 {
                if let found = tiffOrientationTag(bytes, from: segment + 6, to: segmentEnd), accepting(found) {
                    return found
                }
            }
            position = segmentEnd
        }
        return nil
    }

    private static func tiffOrientationTag(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) -> Int? {
        guard end - start >= 8 else { return nil }
        let littleEndian: Bool
        if bytes[start] == 0x49 && bytes[start + 1] == 0x49 { littleEndian = true }
        else if bytes[start] == 0x4D && bytes[start + 1] == 0x4D { littleEndian = false }
        else { return nil }
        func u16(_ at: Int) -> Int? {
            guard at >= start, at + 2 <= end else { return nil }
            let a = Int(bytes[at]), b = Int(bytes[at + 1])
            return littleEndian ? (b << 8 | a) : (a << 8 | b)
        }
        func u32(_ at: Int) -> Int? {
            guard let high = u16(littleEndian ? at + 2 : at), let low = u16(littleEndian ? at : at + 2) else { return nil }
            return high << 16 | low
        }
        guard u16(start + 2) == 42, let ifdOffset = u32(start + 4) else { return nil }
        let ifd = start + ifdOffset
        guard let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard let type = u16(at + 2), type == 3, let value = u16(at + 8) else { return nil }
                return value
            }
        }
        return nil
    }
}
