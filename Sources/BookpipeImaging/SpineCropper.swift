/// One crop written by ``SpineCropper``.
public struct SpineCrop: Sendable {
    /// The JPEG file.
    public let jpeg: [UInt8]
    /// Output width in pixels.
    public let width: Int
    /// Output height in pixels.
    public let height: Int
    /// The selected pixels of the full-size upright photo.
    public let rect: PixelRect
    /// Why the box was replaced by the whole photo, or nil.
    public let note: String?
}

/// Cuts spine crops out of a shelf photo: boxes refer to the upright picture, each crop is
/// resized to fit `maxEdge` and encoded.
///
/// The photo is decoded once, at the shrink-on-load the least-reduced crop allows and only over
/// the rows and columns the boxes cover, in one pass from top to bottom: every decoded row goes
/// to each crop it falls in, each crop is resampled as its rows pass and encoded when its last
/// row is in, so the decoded picture is never held (a 12 MP photo with 30 boxes stays under
/// 50 MB of resident memory).
///
/// ```swift
/// let crops = try SpineCropper().crops(photo: bytes, file: "shelf.jpg", boxes: boxes, maxEdge: 800)
/// ```
public struct SpineCropper: Sendable {
    /// The decoder (and its pixel limit).
    public var decoder: ImageDecoder
    /// The resizer (and its filter).
    public var resizer: Resizer
    /// JPEG quality of the crops.
    public var quality: Int

    /// Creates a cropper.
    public init(decoder: ImageDecoder = ImageDecoder(), resizer: Resizer = Resizer(), quality: Int = 85) {
        self.decoder = decoder
        self.resizer = resizer
        self.quality = quality
    }

    /// The crops of `boxes`, in box order.
    ///
    /// - Parameters:
    ///   - photo: the JPEG file's bytes.
    ///   - file: the name used in errors.
    ///   - boxes: boxes in the upright photo; an invalid one gives the whole photo (see
    ///     ``CropRectangle``) and its crop's ``SpineCrop/note`` says so.
    ///   - maxEdge: the longer side of each crop at most (smaller crops are not enlarged).
    /// - Throws: ``ImagingError`` for unreadable, non-JPEG, truncated or oversized photos.
    public func crops(photo: [UInt8], file: String, boxes: [NormalizedBox], maxEdge: Int = 800) throws(ImagingError) -> [SpineCrop] {
        guard !boxes.isEmpty else { return [] }
        guard maxEdge > 0 else {
            throw ImagingError(.invalidArgument, file: file, detail: "the maximum edge must be positive, not \(maxEdge)")
        }
        return try photo.withUnsafeBufferPointer { buffer throws(ImagingError) in
            let header = try decoder.header(of: buffer, file: file)
            struct Plan { let crop: CropRectangle; let stored: PixelRect; let outWidth: Int; let outHeight: Int }
            var plans: [Plan] = []
            var reduction = Double.infinity
            for box in boxes {
                let crop = CropRectangle(box: box, width: header.width, height: header.height)
                let stored = header.orientation.storedRect(forUpright: crop.rect, uprightWidth: header.width,
                                                           uprightHeight: header.height)
                let (w, h) = Resizer.fittingSize(width: stored.width, height: stored.height, longEdge: maxEdge)
                reduction = min(reduction, Double(stored.width) / Double(w), Double(stored.height) / Double(h))
                plans.append(Plan(crop: crop, stored: stored, outWidth: w, outHeight: h))
            }
            let scale = DecodeScale.shrinkOnLoad(forReduction: reduction)
            let encoder = JPEGEncoder(quality: quality)
            if plans.count == 1, let plan = plans.first {
                let region = ImageDecoder.scaledRect(plan.stored, scale: scale, width: header.storedWidth,
                                                     height: header.storedHeight)
                let picture = try StreamingResize(decoder: decoder, resizer: resizer)
                    .run(buffer, file: file, header: header, scale: scale, region: region,
                         outputWidth: plan.outWidth, outputHeight: plan.outHeight, readsEveryRow: false)
                return [SpineCrop(jpeg: try encoder.encode(picture, file: file), width: picture.width,
                                  height: picture.height, rect: plan.crop.rect, note: plan.crop.note)]
            }
            let regions = plans.map {
                ImageDecoder.scaledRect($0.stored, scale: scale, width: header.storedWidth, height: header.storedHeight)
            }
            let union = regions.dropFirst().reduce(regions[0]) { $0.union($1) }
            let locals = regions.map {
                PixelRect(x: $0.x - union.x, y: $0.y - union.y, width: $0.width, height: $0.height)
            }
            return try cropInOnePass(buffer, file: file, header: header, scale: scale, union: union,
                                     locals: locals, plans: plans.map { ($0.crop, $0.outWidth, $0.outHeight) },
                                     encoder: encoder)
        }
    }
}

extension SpineCropper {
    /// Decodes the union of the crops' regions once, top to bottom (on a second thread, into a
    /// ring of rows), and feeds each row to every crop it falls in: each crop is resampled as
    /// the rows pass and encoded as soon as its last row is in. Neither the decoded union nor
    /// more than the crops in progress are ever held.
    fileprivate func cropInOnePass(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader,
                                   scale: DecodeScale, union: PixelRect, locals: [PixelRect],
                                   plans: [(crop: CropRectangle, outWidth: Int, outHeight: Int)],
                                   encoder: JPEGEncoder) throws(ImagingError) -> [SpineCrop] {
        let stream = try RowStream(buffer, file: file, header: header, scale: scale, region: union)
        let rowBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: union.width * 3)
        defer { rowBuffer.deallocate() }
        // The ring absorbs rows where many crops are in progress at once.
        let pump = union.height >= 256 ? RowPump(stream, rows: union.height, ringRows: 256) : nil
        let byTop = locals.indices.sorted { locals[$0].y < locals[$1].y }
        var started = 0
        var active: [CropInProgress] = []
        var results = [SpineCrop?](repeating: nil, count: locals.count)
        for y in 0..<union.height {
            let row: UnsafePointer<UInt8>
            if let pump {
                row = try pump.row(y)
            } else {
                try stream.read(into: rowBuffer, stride: union.width * 3, count: 1)
                row = UnsafePointer(rowBuffer)
            }
            while started < byTop.count, locals[byTop[started]].y == y {
                let index = byTop[started]
                let plan = plans[index]
                active.append(CropInProgress(index: index, region: locals[index], outputWidth: plan.outWidth,
                                             outputHeight: plan.outHeight, orientation: header.orientation,
                                             filter: resizer.filter))
                started += 1
            }
            var position = 0
            while position < active.count {
                let crop = active[position]
                try crop.resample.push(row + crop.region.x * 3)
                guard y == crop.region.y + crop.region.height - 1 else {
                    position += 1
                    continue
                }
                let plan = plans[crop.index]
                let jpeg = try encoder.encode(UnsafePointer(crop.pixels), width: crop.width, height: crop.height, file: file)
                results[crop.index] = SpineCrop(jpeg: jpeg, width: crop.width, height: crop.height,
                                                rect: plan.crop.rect, note: plan.crop.note)
                active.remove(at: position)
            }
        }
        try pump?.finish()
        try stream.finish()
        return results.compactMap { $0 }
    }
}

/// One crop being resampled from rows as they are decoded: its upright output picture and the
/// resample that fills it. Owns the picture's memory; used by one thread.
private final class CropInProgress {
    /// The box's position in the list.
    let index: Int
    /// Its region in the decoded union's pixels.
    let region: PixelRect
    /// Upright output width.
    let width: Int
    /// Upright output height.
    let height: Int
    /// The upright output, `width * height * 3` bytes.
    let pixels: UnsafeMutablePointer<UInt8>
    let resample: ResampleStream

    init(index: Int, region: PixelRect, outputWidth: Int, outputHeight: Int, orientation: Orientation,
         filter: ResizeFilter) {
        self.index = index
        self.region = region
        (width, height) = orientation.uprightSize(width: outputWidth, height: outputHeight)
        pixels = .allocate(capacity: width * height * 3)
        resample = ResampleStream(filter: filter, inputWidth: region.width, inputHeight: region.height,
                                  outputWidth: outputWidth, outputHeight: outputHeight,
                                  orientation: orientation, output: pixels)
    }

    deinit { pixels.deallocate() }
}
