/// Decodes a region of a JPEG and resizes it in one pass: decoded rows go into a ring buffer just
/// deep enough for the vertical filter, so the full-size picture is never held in memory.
struct StreamingResize {
    let decoder: ImageDecoder
    let resizer: Resizer
    /// Whether rows are decoded on a second thread (a ``RowPump``) while this one resizes.
    var inBackground = true

    /// Decodes `region` (stored pixels at `scale`) and resamples it to `outputWidth` ×
    /// `outputHeight` stored pixels, returned turned upright by the header's orientation.
    ///
    /// - Parameter readsEveryRow: when true, rows the filter did not need are decoded too, so
    ///   a file cut off at its very end is still reported as truncated.
    func run(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
             region: PixelRect, outputWidth: Int, outputHeight: Int,
             readsEveryRow: Bool) throws(ImagingError) -> PixelBuffer {
        let (uprightWidth, uprightHeight) = header.orientation.uprightSize(width: outputWidth, height: outputHeight)
        return try PixelBuffer(width: uprightWidth, height: uprightHeight) { pixels throws(ImagingError) in
            guard let output = pixels.baseAddress else { return }
            try stream(buffer, file: file, header: header, scale: scale, region: region, outputWidth: outputWidth,
                       outputHeight: outputHeight, readsEveryRow: readsEveryRow, output: output, rowDone: nil)
        }
    }

    /// Whether ``runEncoded(_:file:header:scale:region:outputWidth:outputHeight:quality:)`` can
    /// encode rows as they are resized: the stored rows must stay rows when turned upright.
    static func canEncodeRows(_ orientation: Orientation) -> Bool {
        orientation == .topLeft || orientation == .topRight
    }

    /// Like ``run(_:file:header:scale:region:outputWidth:outputHeight:readsEveryRow:)`` (every
    /// row read), but each output row goes straight into a JPEG encoder at `quality`, so neither
    /// the input nor the output picture is ever held whole. Only for orientations where
    /// ``canEncodeRows(_:)``.
    func runEncoded(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
                    region: PixelRect, outputWidth: Int, outputHeight: Int,
                    quality: Int) throws(ImagingError) -> [UInt8] {
        let encoder = try RowEncoder(width: outputWidth, height: outputHeight, quality: quality, file: file)
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: outputWidth * 3)
        defer { row.deallocate() }
        try stream(buffer, file: file, header: header, scale: scale, region: region, outputWidth: outputWidth,
                   outputHeight: outputHeight, readsEveryRow: true, output: row) { _ throws(ImagingError) in
            try encoder.write(UnsafePointer(row))
        }
        return try encoder.finish()
    }

    /// Like ``run(_:file:header:scale:region:outputWidth:outputHeight:readsEveryRow:)`` (every
    /// row read), but the upright picture is held as YCbCr 4:2:0 planes, each output row
    /// converted as soon as the resizer finishes it: half the memory of the RGB picture, for
    /// any orientation, encoded later (possibly several times) with the same result as
    /// ``JPEGEncoder`` at 4:2:0.
    func runPlanes(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
                   region: PixelRect, outputWidth: Int, outputHeight: Int) throws(ImagingError) -> YCbCrPlanes {
        let orientation = header.orientation
        let (uprightWidth, uprightHeight) = orientation.uprightSize(width: outputWidth, height: outputHeight)
        let planes = try YCbCrPlanes(width: uprightWidth, height: uprightHeight,
                                     linesAreColumns: orientation.swapsDimensions, file: file)
        let row = UnsafeMutablePointer<UInt8>.allocate(capacity: outputWidth * 3)
        defer { row.deallocate() }
        try stream(buffer, file: file, header: header, scale: scale, region: region, outputWidth: outputWidth,
                   outputHeight: outputHeight, readsEveryRow: true, output: row) { y throws(ImagingError) in
            try planes.putLine(orientation.uprightLine(storedRow: y, storedHeight: outputHeight).index,
                               pixels: UnsafePointer(row))
        }
        return planes
    }

    private func stream(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
                        region: PixelRect, outputWidth: Int, outputHeight: Int, readsEveryRow: Bool,
                        output: UnsafeMutablePointer<UInt8>,
                        rowDone: ((Int) throws(ImagingError) -> Void)?) throws(ImagingError) {
        let stream = try RowStream(buffer, file: file, header: header, scale: scale, region: region)
        let rowBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: region.width * 3)
        defer { rowBuffer.deallocate() }
        var decoded = 0
        let needed = readsEveryRow ? region.height : lastNeededRow(outputHeight: outputHeight, inputHeight: region.height)
        // Decode on a second thread while this one resizes (when the picture is big enough
        // for the overlap to pay for a thread); the ring holds enough rows to absorb jitter.
        let pump = inBackground && needed >= 256 ? RowPump(stream, rows: needed, ringRows: 96) : nil
        try resizer.resample(inputWidth: region.width, inputHeight: region.height,
                             outputWidth: outputWidth, outputHeight: outputHeight,
                             orientation: header.orientation, output: output, rowDone: rowDone) { row throws(ImagingError) in
            // The resampler asks for every row once, in order; the last rows are only
            // decoded when they matter for the result or for noticing a cut-off file.
            guard row < needed else { return UnsafePointer(rowBuffer) }
            if let pump { return try pump.row(row) }
            if row == decoded {
                try stream.read(into: rowBuffer, stride: region.width * 3, count: 1)
                decoded += 1
            }
            return UnsafePointer(rowBuffer)
        }
        try pump?.finish()
        try stream.finish()
    }

    /// One past the last input row the vertical filter reads.
    private func lastNeededRow(outputHeight: Int, inputHeight: Int) -> Int {
        let weights = AxisWeights(filter: resizer.filter, inputSize: inputHeight, outputSize: outputHeight)
        guard let start = weights.starts.last, let count = weights.counts.last else { return inputHeight }
        return Int(start + count)
    }
}

extension AxisWeights {
    /// The most input pixels one output pixel can need (the ring depth for streaming).
    static func maxTaps(filter: ResizeFilter, inputSize: Int, outputSize: Int) -> Int {
        let scale = Double(inputSize) / Double(max(outputSize, 1))
        return Int((filter.support * max(scale, 1)).rounded(.up)) * 2 + 1
    }
}
