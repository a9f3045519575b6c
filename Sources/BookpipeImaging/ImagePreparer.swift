#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A photo prepared for a preset: the JPEG and what was done to get it.
public struct PreparedImage: Sendable {
    /// The JPEG file.
    public let jpeg: [UInt8]
    /// Output width in pixels (upright).
    public let width: Int
    /// Output height in pixels (upright).
    public let height: Int
    /// The JPEG quality of ``jpeg``.
    public let quality: Int
    /// How many times the picture was encoded (1 when the first try fit the target).
    public let encodeCount: Int
    /// Whether the size is inside the preset's target (true when there is no target or
    /// targeting was off).
    public let isWithinTarget: Bool
    /// Said plainly when the size is outside the target, nil otherwise.
    public let note: String?
    /// The shrink-on-load used while decoding.
    public let decodeScale: DecodeScale
}

/// Turns a photo into the JPEG a preset asks for: decode (shrinking on load only where at least
/// 2× is left for the filter), turn upright, resize, encode, and adjust quality to the size target.
///
/// ```swift
/// let prepared = try ImagePreparer().prepare(photoAt: "shelf.jpg", preset: .cloudflare)
/// ```
public struct ImagePreparer: Sendable {
    /// The decoder (and its pixel limit).
    public var decoder: ImageDecoder
    /// The resizer (and its filter).
    public var resizer: Resizer
    /// Whether rows are decoded on a second thread while this one resizes (default true).
    /// Turn it off when every core already prepares a photo of its own.
    public var decodesInBackground: Bool

    /// Creates a preparer.
    public init(decoder: ImageDecoder = ImageDecoder(), resizer: Resizer = Resizer(), decodesInBackground: Bool = true) {
        self.decoder = decoder
        self.resizer = resizer
        self.decodesInBackground = decodesInBackground
    }

    /// Prepares the photo at `path`; see ``prepare(photo:file:preset:fixedQuality:)``.
    public func prepare(photoAt path: String, preset: ImagePreset, fixedQuality: Bool = false) throws(ImagingError) -> PreparedImage {
        // The file's bytes are released before the encode (a 12 MP JPEG is about 3 MB).
        let stage = try { () throws(ImagingError) -> Stage in
            try resizeStage(photo: try FileIO.read(path), file: path, preset: preset, fixedQuality: fixedQuality)
        }()
        return try finish(stage, file: path, preset: preset, fixedQuality: fixedQuality)
    }

    /// Prepares a photo for `preset`.
    ///
    /// When the preset has a size target and `fixedQuality` is false, a result above the target
    /// is re-encoded at lower qualities down to the preset's floor (at most 4 encodes in all, each
    /// counted in ``PreparedImage/encodeCount``); a result still too large at the floor, or one
    /// below the target, is kept and ``PreparedImage/note`` says so.
    ///
    /// - Parameters:
    ///   - photo: the JPEG file's bytes.
    ///   - file: the name used in errors and notes.
    ///   - preset: the target.
    ///   - fixedQuality: encode once at the preset's quality, ignoring the size target.
    /// - Throws: ``ImagingError`` for unreadable, non-JPEG, truncated or oversized photos.
    public func prepare(photo: [UInt8], file: String, preset: ImagePreset, fixedQuality: Bool = false) throws(ImagingError) -> PreparedImage {
        try finish(try resizeStage(photo: photo, file: file, preset: preset, fixedQuality: fixedQuality),
                   file: file, preset: preset, fixedQuality: fixedQuality)
    }

    /// What decoding and resizing produced: the finished JPEG (when it could be encoded row by
    /// row) or the picture still to encode, held as YCbCr 4:2:0 planes (half the memory of RGB).
    enum Stage {
        case encoded(jpeg: [UInt8], width: Int, height: Int, scale: DecodeScale)
        case planes(YCbCrPlanes, scale: DecodeScale)
    }

    func resizeStage(photo: [UInt8], file: String, preset: ImagePreset, fixedQuality: Bool) throws(ImagingError) -> Stage {
        let singleEncode = fixedQuality || preset.targetBytes == nil
        return try photo.withUnsafeBufferPointer { buffer throws(ImagingError) -> Stage in
            let header = try decoder.header(of: buffer, file: file)
            let (uprightWidth, uprightHeight) = Resizer.fittingSize(width: header.width, height: header.height,
                                                                    longEdge: preset.longEdge)
            let (storedWidth, storedHeight) = header.orientation.uprightSize(width: uprightWidth, height: uprightHeight)
            let reduction = min(Double(header.storedWidth) / Double(storedWidth),
                                Double(header.storedHeight) / Double(storedHeight))
            let scale = DecodeScale.shrinkOnLoad(forReduction: reduction)
            let region = PixelRect(x: 0, y: 0, width: scale.scaled(header.storedWidth),
                                   height: scale.scaled(header.storedHeight))
            let resize = StreamingResize(decoder: decoder, resizer: resizer, inBackground: decodesInBackground)
            if singleEncode && StreamingResize.canEncodeRows(header.orientation) {
                // One encode at a known quality: rows go into the encoder as they are resized,
                // so the output picture is never held (less memory, and the encode overlaps
                // the decode on the other core).
                let jpeg = try resize.runEncoded(buffer, file: file, header: header, scale: scale, region: region,
                                                 outputWidth: storedWidth, outputHeight: storedHeight,
                                                 quality: preset.quality)
                return .encoded(jpeg: jpeg, width: uprightWidth, height: uprightHeight, scale: scale)
            }
            // A rotation that turns rows into columns, or several encodes for the size target:
            // the picture is held, as YCbCr 4:2:0 planes (the file is the same as from RGB).
            let planes = try resize.runPlanes(buffer, file: file, header: header, scale: scale, region: region,
                                              outputWidth: storedWidth, outputHeight: storedHeight)
            return .planes(planes, scale: scale)
        }
    }

    func finish(_ stage: Stage, file: String, preset: ImagePreset, fixedQuality: Bool) throws(ImagingError) -> PreparedImage {
        switch stage {
        case .encoded(let jpeg, let width, let height, let scale):
            return PreparedImage(jpeg: jpeg, width: width, height: height, quality: preset.quality, encodeCount: 1,
                                 isWithinTarget: true, note: nil, decodeScale: scale)
        case .planes(let planes, let scale):
            let search = try QualitySearch(file: file, preset: preset, fixedQuality: fixedQuality) { quality throws(ImagingError) in
                try planes.encode(quality: quality)
            }.run()
            return PreparedImage(jpeg: search.jpeg, width: planes.width, height: planes.height,
                                 quality: search.quality, encodeCount: search.encodeCount,
                                 isWithinTarget: search.note == nil, note: search.note, decodeScale: scale)
        }
    }
}

/// Chooses the JPEG quality for a size target with few encodes: the preset quality, then the
/// floor, then up to two guesses interpolated on log(size).
struct QualitySearch {
    let file: String
    let preset: ImagePreset
    let fixedQuality: Bool
    /// Encodes the picture at a quality.
    let encoder: (Int) throws(ImagingError) -> [UInt8]

    struct Outcome {
        var jpeg: [UInt8]
        var quality: Int
        var encodeCount: Int
        var note: String?
    }

    func run() throws(ImagingError) -> Outcome {
        var count = 0
        func encode(_ quality: Int) throws(ImagingError) -> [UInt8] {
            count += 1
            return try encoder(quality)
        }
        let first = try encode(preset.quality)
        guard !fixedQuality, let target = preset.targetBytes else {
            return Outcome(jpeg: first, quality: preset.quality, encodeCount: count, note: nil)
        }
        if target.contains(first.count) {
            return Outcome(jpeg: first, quality: preset.quality, encodeCount: count, note: nil)
        }
        let range = "\(kilobytes(target.lowerBound))–\(kilobytes(target.upperBound)) target"
        if first.count < target.lowerBound {
            return Outcome(jpeg: first, quality: preset.quality, encodeCount: count,
                           note: "\(kilobytes(first.count)) at quality \(preset.quality) is below the \(range); kept (quality is not raised above the preset)")
        }
        let floor = preset.qualityFloor
        if floor >= preset.quality {
            return Outcome(jpeg: first, quality: preset.quality, encodeCount: count,
                           note: "\(kilobytes(first.count)) is above the \(range); the preset allows no lower quality")
        }
        let atFloor = try encode(floor)
        if atFloor.count > target.upperBound {
            return Outcome(jpeg: atFloor, quality: floor, encodeCount: count,
                           note: "\(kilobytes(atFloor.count)) even at the quality floor \(floor) (\(kilobytes(first.count)) at \(preset.quality)); the \(range) cannot be reached")
        }
        // Bracket: low quality fits (or is too small), high quality is too large.
        var low = (quality: floor, bytes: atFloor)
        var high = (quality: preset.quality, size: first.count)
        var best: (quality: Int, bytes: [UInt8])? = target.contains(atFloor.count) ? (floor, atFloor) : nil
        let goal = log(Double(target.lowerBound + target.upperBound) / 2)
        for _ in 0..<2 where high.quality - low.quality > 1 {
            let a = log(Double(low.bytes.count)), b = log(Double(high.size))
            let fraction = b > a ? (goal - a) / (b - a) : 0.5
            var guess = low.quality + Int((Double(high.quality - low.quality) * fraction).rounded(.down))
            guess = min(max(guess, low.quality + 1), high.quality - 1)
            let bytes = try encode(guess)
            if bytes.count > target.upperBound {
                high = (guess, bytes.count)
            } else {
                low = (guess, bytes)
                if target.contains(bytes.count), guess > (best?.quality ?? 0) { best = (guess, bytes) }
                if target.contains(bytes.count) { break }
            }
        }
        if let best {
            return Outcome(jpeg: best.bytes, quality: best.quality, encodeCount: count, note: nil)
        }
        return Outcome(jpeg: low.bytes, quality: low.quality, encodeCount: count,
                       note: "\(kilobytes(low.bytes.count)) at quality \(low.quality) is below the \(range) (the next quality up, \(high.quality), gave \(kilobytes(high.size)))")
    }

    private func kilobytes(_ bytes: Int) -> String {
        "\((bytes + 500) / 1000) KB"
    }
}
