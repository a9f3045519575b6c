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
/// the rows and columns the boxes cover; a single box is decoded and resized in one stream.
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
            // Decode the union once, on a second thread, into one buffer; this thread cuts each
            // crop as soon as the rows it needs are there (lowest bottom edge first).
            let stream = try RowStream(buffer, file: file, header: header, scale: scale, region: union)
            let stride = union.width * 3
            let pixels = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * union.height)
            defer { pixels.deallocate() }
            let pump = RowPump(stream, rows: union.height, ringRows: union.height, target: pixels)
            if pump == nil { try stream.read(into: pixels, stride: stride, count: union.height) }
            let locals = regions.map {
                PixelRect(x: $0.x - union.x, y: $0.y - union.y, width: $0.width, height: $0.height)
            }
            let order = locals.indices.sorted { locals[$0].y + locals[$0].height < locals[$1].y + locals[$1].height }
            var results = [SpineCrop?](repeating: nil, count: plans.count)
            for index in order {
                let plan = plans[index], local = locals[index]
                if let pump { _ = try pump.row(local.y + local.height - 1) }
                let picture = try resizer.resizeStored(pixels, stride: stride, region: local, outputWidth: plan.outWidth,
                                                       outputHeight: plan.outHeight, orientation: header.orientation)
                results[index] = SpineCrop(jpeg: try encoder.encode(picture, file: file), width: picture.width,
                                           height: picture.height, rect: plan.crop.rect, note: plan.crop.note)
            }
            try pump?.finish()
            try stream.finish()
            return results.compactMap { $0 }
        }
    }
}

extension Resizer {
    /// Resamples `region` of a stored picture to `outputWidth` × `outputHeight` stored pixels and
    /// returns it turned upright.
    func resizeStored(_ image: PixelBuffer, region: PixelRect, outputWidth: Int, outputHeight: Int,
                      orientation: Orientation) throws(ImagingError) -> PixelBuffer {
        let source = region.clamped(width: image.width, height: image.height)
        let (uprightWidth, uprightHeight) = orientation.uprightSize(width: outputWidth, height: outputHeight)
        return try PixelBuffer(width: uprightWidth, height: uprightHeight) { pixels throws(ImagingError) in
            guard let output = pixels.baseAddress else { return }
            try image.bytes.withUnsafeBufferPointer { input throws(ImagingError) in
                guard let from = input.baseAddress else { return }
                let stride = image.width * 3
                let origin = from + source.y * stride + source.x * 3
                try resample(inputWidth: source.width, inputHeight: source.height, outputWidth: outputWidth,
                             outputHeight: outputHeight, orientation: orientation, output: output) { row in
                    origin + row * stride
                }
            }
        }
    }
}

extension Resizer {
    /// Resamples `region` of stored pixels at `pixels` (rows `stride` bytes apart) to
    /// `outputWidth` × `outputHeight` stored pixels and returns it turned upright.
    func resizeStored(_ pixels: UnsafePointer<UInt8>, stride: Int, region: PixelRect, outputWidth: Int,
                      outputHeight: Int, orientation: Orientation) throws(ImagingError) -> PixelBuffer {
        let (uprightWidth, uprightHeight) = orientation.uprightSize(width: outputWidth, height: outputHeight)
        return try PixelBuffer(width: uprightWidth, height: uprightHeight) { output throws(ImagingError) in
            guard let to = output.baseAddress else { return }
            let origin = pixels + region.y * stride + region.x * 3
            try resample(inputWidth: region.width, inputHeight: region.height, outputWidth: outputWidth,
                         outputHeight: outputHeight, orientation: orientation, output: to) { row in
                origin + row * stride
            }
        }
    }
}
