/// Decodes a region of a JPEG and resizes it in one pass: decoded rows go into a ring buffer just
/// deep enough for the vertical filter, so the full-size picture is never held in memory.
struct StreamingResize {
    let decoder: ImageDecoder
    let resizer: Resizer

    /// Decodes `region` (stored pixels at `scale`) and resamples it to `outputWidth` ×
    /// `outputHeight` stored pixels, returned turned upright by the header's orientation.
    ///
    /// - Parameter readsEveryRow: when true, rows the filter did not need are decoded too, so
    ///   a file cut off at its very end is still reported as truncated.
    func run(_ buffer: UnsafeBufferPointer<UInt8>, file: String, header: JPEGHeader, scale: DecodeScale,
             region: PixelRect, outputWidth: Int, outputHeight: Int,
             readsEveryRow: Bool) throws(ImagingError) -> PixelBuffer {
        let stream = try RowStream(buffer, file: file, header: header, scale: scale, region: region)
        let rowBytes = region.width * 3
        let depth = AxisWeights.maxTaps(filter: resizer.filter, inputSize: region.height, outputSize: outputHeight) + 1
        let ring = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * depth)
        defer { ring.deallocate() }
        var decoded = 0
        let orientation = header.orientation
        let (uprightWidth, uprightHeight) = orientation.uprightSize(width: outputWidth, height: outputHeight)
        return try PixelBuffer(width: uprightWidth, height: uprightHeight) { pixels throws(ImagingError) in
            guard let output = pixels.baseAddress else { return }
            try resizer.resample(inputWidth: region.width, inputHeight: region.height,
                                 outputWidth: outputWidth, outputHeight: outputHeight,
                                 orientation: orientation, output: output) { row throws(ImagingError) in
                while decoded <= row {
                    // Read as many consecutive rows as fit before the ring wraps.
                    let slot = decoded % depth
                    let count = min(row - decoded + 1, depth - slot)
                    try stream.read(into: ring + slot * rowBytes, stride: rowBytes, count: count)
                    decoded += count
                }
                return UnsafePointer(ring + (row % depth) * rowBytes)
            }
            if readsEveryRow {
                while decoded < region.height {
                    try stream.read(into: ring, stride: rowBytes, count: 1)
                    decoded += 1
                }
            }
            try stream.finish()
        }
    }
}

extension AxisWeights {
    /// The most input pixels one output pixel can need (the ring depth for streaming).
    static func maxTaps(filter: ResizeFilter, inputSize: Int, outputSize: Int) -> Int {
        let scale = Double(inputSize) / Double(max(outputSize, 1))
        return Int((filter.support * max(scale, 1)).rounded(.up)) * 2 + 1
    }
}
