internal import CJPEGShim

/// The resampling filter of a ``Resizer``.
public enum ResizeFilter: String, Sendable, CaseIterable, Codable {
    /// Lanczos with 3 lobes: sharp, little aliasing (the default).
    case lanczos3
    /// Linear interpolation (a triangle filter, widened when reducing).
    case bilinear
    /// Area average: each output pixel is the mean of the input pixels it covers.
    case box

    /// Half-width of the kernel in output pixels.
    var support: Double {
        switch self {
        case .lanczos3: return 3
        case .bilinear: return 1
        case .box: return 0.5
        }
    }

    /// The kernel at distance `x` (in output pixels).
    func weight(_ x: Double) -> Double {
        switch self {
        case .lanczos3:
            if x == 0 { return 1 }
            if x <= -3 || x >= 3 { return 0 }
            let pix = Double.pi * x
            return 3 * sin(pix) * sin(pix / 3) / (pix * pix)
        case .bilinear:
            let a = abs(x)
            return a < 1 ? 1 - a : 0
        case .box:
            return (x >= -0.5 && x < 0.5) ? 1 : 0
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Precomputed filter weights for one axis: for each output pixel, the first input pixel and
/// `taps` weights (zero-padded) that sum to 1.
struct AxisWeights {
    let outputSize: Int
    let taps: Int
    let starts: [Int32]
    let counts: [Int32]
    let weights: [Float]

    /// Weights for resampling `inputSize` pixels to `outputSize` (Pillow's convention: pixel
    /// centres at i + 0.5, the kernel widened by the reduction factor).
    init(filter: ResizeFilter, inputSize: Int, outputSize: Int) {
        let scale = Double(inputSize) / Double(outputSize)
        let filterScale = max(scale, 1)
        let support = filter.support * filterScale
        let maxTaps = Int(support.rounded(.up)) * 2 + 1
        var starts = [Int32](repeating: 0, count: outputSize)
        var counts = [Int32](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * maxTaps)
        var used = 1
        var raw = [Double](repeating: 0, count: maxTaps)
        for out in 0..<outputSize {
            let center = (Double(out) + 0.5) * scale
            var first = max(Int((center - support + 0.5).rounded(.down)), 0)
            var last = min(Int((center + support + 0.5).rounded(.down)), inputSize)  // exclusive
            if last - first > maxTaps { last = first + maxTaps }
            var total = 0.0
            for j in first..<max(last, first) {
                let w = filter.weight((Double(j) - center + 0.5) / filterScale)
                raw[j - first] = w
                total += w
            }
            // Trim taps with no weight (exact copies, box edges).
            while last - first > 1 && raw[0] == 0 {
                raw.removeFirst(); raw.append(0); first += 1
            }
            while last - first > 1 && raw[last - first - 1] == 0 { last -= 1 }
            if last <= first || total == 0 {
                first = min(max(Int(center), 0), inputSize - 1)
                last = first + 1
                raw[0] = 1
                total = 1
            }
            starts[out] = Int32(first)
            counts[out] = Int32(last - first)
            used = max(used, last - first)
            for k in 0..<(last - first) { weights[out * maxTaps + k] = Float(raw[k] / total) }
            for k in 0..<maxTaps { raw[k] = 0 }
        }
        self.outputSize = outputSize
        self.taps = maxTaps
        self.starts = starts
        self.counts = counts
        self.weights = weights
        _ = used
    }
}

/// Resizes RGB8 pictures with a separable filter (Lanczos-3 by default).
///
/// The vertical pass runs first, one output row at a time over the input rows it needs, so the
/// only intermediate is one row of floats and the input can stream in from the decoder; the
/// horizontal pass then writes the output row. Weights are computed once per call.
///
/// ```swift
/// let small = Resizer().resize(photo, width: 1536, height: 1152)
/// ```
public struct Resizer: Sendable {
    /// The filter used.
    public var filter: ResizeFilter

    /// Creates a resizer with `filter`.
    public init(filter: ResizeFilter = .lanczos3) {
        self.filter = filter
    }

    /// The size that fits `width` × `height` into `longEdge` on its longer side, keeping the
    /// aspect ratio (the shorter side rounded to the nearest pixel, at least 1). Pictures that
    /// already fit keep their size: nothing is enlarged.
    public static func fittingSize(width: Int, height: Int, longEdge: Int) -> (width: Int, height: Int) {
        let long = max(width, height)
        guard longEdge > 0, long > longEdge else { return (width, height) }
        let scale = Double(longEdge) / Double(long)
        if width >= height {
            return (longEdge, max(1, Int((Double(height) * scale).rounded())))
        }
        return (max(1, Int((Double(width) * scale).rounded())), longEdge)
    }

    /// `image` (or the part inside `region`) resampled to `width` × `height`.
    public func resize(_ image: PixelBuffer, region: PixelRect? = nil, width: Int, height: Int) -> PixelBuffer {
        let source = (region ?? PixelRect(x: 0, y: 0, width: image.width, height: image.height))
            .clamped(width: image.width, height: image.height)
        let outWidth = max(width, 1), outHeight = max(height, 1)
        var result = PixelBuffer(width: outWidth, height: outHeight, red: 0, green: 0, blue: 0)
        image.bytes.withUnsafeBufferPointer { input in
            result.bytes.withUnsafeMutableBufferPointer { output in
                guard let from = input.baseAddress, let to = output.baseAddress else { return }
                let stride = image.width * 3
                let origin = from + source.y * stride + source.x * 3
                // Rows come straight from memory: the closure cannot fail.
                try? resample(inputWidth: source.width, inputHeight: source.height,
                              outputWidth: outWidth, outputHeight: outHeight, orientation: .topLeft,
                              output: to) { row in origin + row * stride }
            }
        }
        return result
    }

    /// The core: resamples `inputWidth` × `inputHeight` rows handed out by `row` to
    /// `outputWidth` × `outputHeight` stored pixels, written to `output` turned upright by
    /// `orientation`.
    ///
    /// `row` is called exactly once for every input row, in order, so a decoder can stream into
    /// it; the pointer it returns need only stay valid until the next call. Each row is widened
    /// to floats once into a ring buffer as deep as the vertical filter; the vertical pass
    /// (first, so the only intermediate is one float row) and the horizontal pass run in
    /// C loops (`resample.c`) compiled for AVX2+FMA and for the baseline CPU.
    ///
    /// With `rowDone`, `output` holds a single row: each output row is written there in the
    /// order its pixels have in the upright picture (reversed when the orientation mirrors it;
    /// see ``Orientation/uprightLine(storedRow:storedHeight:)``) and handed to `rowDone` with its
    /// index before the next one is computed.
    func resample(inputWidth: Int, inputHeight: Int, outputWidth: Int, outputHeight: Int,
                  orientation: Orientation, output: UnsafeMutablePointer<UInt8>,
                  rowDone: ((Int) throws(ImagingError) -> Void)? = nil,
                  row: (Int) throws(ImagingError) -> UnsafePointer<UInt8>) throws(ImagingError) {
        let stream = ResampleStream(filter: filter, inputWidth: inputWidth, inputHeight: inputHeight,
                                    outputWidth: outputWidth, outputHeight: outputHeight,
                                    orientation: orientation, output: output, rowDone: rowDone)
        for index in 0..<inputHeight {
            try stream.push(try row(index))
        }
    }
}

/// A resample fed one input row at a time: each output row is computed as soon as the input
/// rows its vertical filter needs have arrived, so several resamples can share one pass over a
/// decoded picture (spine crops) and the input is never held whole.
///
/// Each row is widened to floats once into a ring as deep as the vertical filter; the vertical
/// pass (first, so the only intermediate is one float row) and the horizontal pass run in C
/// loops (`resample.c`). Owns its buffers (freed in `deinit`); used by one thread at a time.
final class ResampleStream {
    private let inputWidth: Int
    private let inputHeight: Int
    private let outputWidth: Int
    private let outputHeight: Int
    private let orientation: Orientation
    private let output: UnsafeMutablePointer<UInt8>
    private let rowDone: ((Int) throws(ImagingError) -> Void)?
    private let horizontalTaps: Int
    private let verticalTaps: Int
    private let horizontalWeights: UnsafeMutablePointer<Float>
    private let horizontalStarts: UnsafeMutablePointer<Int32>
    private let horizontalCounts: UnsafeMutablePointer<Int32>
    private let verticalWeights: UnsafeMutablePointer<Float>
    private let verticalStarts: [Int32]
    private let verticalCounts: [Int32]
    private let ringStride: Int
    private let depth: Int
    private let ring: UnsafeMutablePointer<Float>
    private let accumulator: UnsafeMutablePointer<Float>
    private let rowPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    /// Input rows the filter reads at all (the rest are accepted and ignored).
    private let neededRows: Int
    /// Same size in and out: every filter then gives exactly the input (one tap of weight 1,
    /// or Lanczos' other taps at sin(kπ) ≈ 1e-16, far below rounding), so rows are copied.
    private let copiesRows: Bool
    private var received = 0
    private var nextOutput = 0

    /// Prepares a resample of `inputWidth` × `inputHeight` to `outputWidth` × `outputHeight`
    /// stored pixels, written to `output` turned upright by `orientation`; with `rowDone`,
    /// `output` holds one row instead (see ``Resizer/resample(inputWidth:inputHeight:outputWidth:outputHeight:orientation:output:rowDone:row:)``).
    init(filter: ResizeFilter, inputWidth: Int, inputHeight: Int, outputWidth: Int, outputHeight: Int,
         orientation: Orientation, output: UnsafeMutablePointer<UInt8>,
         rowDone: ((Int) throws(ImagingError) -> Void)? = nil) {
        copiesRows = inputWidth == outputWidth && inputHeight == outputHeight
        // A copy needs no weights (the sines of a 12 MP photo's worth of crops add up).
        let weightFilter = copiesRows ? ResizeFilter.box : filter
        let horizontal = AxisWeights(filter: weightFilter, inputSize: copiesRows ? 1 : inputWidth,
                                     outputSize: copiesRows ? 1 : outputWidth)
        let vertical = AxisWeights(filter: weightFilter, inputSize: copiesRows ? 1 : inputHeight,
                                   outputSize: copiesRows ? 1 : outputHeight)
        self.inputWidth = inputWidth
        self.inputHeight = inputHeight
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        self.orientation = orientation
        self.output = output
        self.rowDone = rowDone
        horizontalTaps = horizontal.taps
        verticalTaps = vertical.taps
        horizontalWeights = Self.copy(horizontal.weights)
        horizontalStarts = Self.copy(horizontal.starts)
        horizontalCounts = Self.copy(horizontal.counts)
        verticalWeights = Self.copy(vertical.weights)
        verticalStarts = vertical.starts
        verticalCounts = vertical.counts
        ringStride = inputWidth * 3 + 8  // one spare float for the last pixel's 4-wide load, rounded up
        depth = vertical.taps + 1
        ring = .allocate(capacity: ringStride * depth)
        ring.initialize(repeating: 0, count: ringStride * depth)
        accumulator = .allocate(capacity: ringStride)
        accumulator.initialize(repeating: 0, count: ringStride)
        rowPointers = .allocate(capacity: max(vertical.taps, 1))
        if copiesRows {
            neededRows = inputHeight
        } else if let start = vertical.starts.last, let count = vertical.counts.last {
            neededRows = Int(start + count)
        } else {
            neededRows = inputHeight
        }
    }

    private static func copy<Element>(_ array: [Element]) -> UnsafeMutablePointer<Element> {
        let pointer = UnsafeMutablePointer<Element>.allocate(capacity: max(array.count, 1))
        array.withUnsafeBufferPointer { buffer in
            if let base = buffer.baseAddress { pointer.initialize(from: base, count: buffer.count) }
        }
        return pointer
    }

    deinit {
        horizontalWeights.deallocate()
        horizontalStarts.deallocate()
        horizontalCounts.deallocate()
        verticalWeights.deallocate()
        ring.deallocate()
        accumulator.deallocate()
        rowPointers.deallocate()
    }

    /// Whether every output row has been written.
    var isFinished: Bool { nextOutput == outputHeight }

    /// Takes the next input row (`inputWidth` RGB8 pixels; the pointer need only stay valid for
    /// the call) and writes every output row that can now be computed.
    func push(_ row: UnsafePointer<UInt8>) throws(ImagingError) {
        let index = received
        guard index < inputHeight else { return }
        received &+= 1
        guard index < neededRows else { return }
        if copiesRows {
            try copy(row, as: index)
            return
        }
        bookpipe_widen_row(row, ring + (index % depth) * ringStride, inputWidth * 3)
        while nextOutput < outputHeight {
            let y = nextOutput
            let first = Int(verticalStarts[y])
            let count = Int(verticalCounts[y])
            guard first + count <= received else { return }
            for k in 0..<count {
                rowPointers[k] = UnsafePointer(ring + ((first + k) % depth) * ringStride)
            }
            bookpipe_vertical_pass(rowPointers, verticalWeights + y * verticalTaps, Int32(count),
                                   inputWidth * 3, accumulator)
            let (start, step) = placement(ofRow: y)
            bookpipe_horizontal_pass(accumulator, horizontalWeights, Int32(horizontalTaps),
                                     horizontalStarts, horizontalCounts,
                                     Int32(outputWidth), output + start, step)
            nextOutput = y + 1
            try rowDone?(y)
        }
    }

    /// Where output row `y` goes in `output`: its first pixel's byte offset and the step between pixels.
    private func placement(ofRow y: Int) -> (start: Int, step: Int) {
        if rowDone == nil {
            return orientation.uprightPlacement(row: y, storedWidth: outputWidth, storedHeight: outputHeight)
        }
        return orientation.uprightLine(storedRow: y, storedHeight: outputHeight).reversed
            ? ((outputWidth - 1) * 3, -3) : (0, 3)
    }

    /// The same-size case: input row `y` is output row `y`.
    private func copy(_ row: UnsafePointer<UInt8>, as y: Int) throws(ImagingError) {
        let (start, step) = placement(ofRow: y)
        if step == 3 {
            (output + start).update(from: row, count: outputWidth * 3)
        } else {
            var target = output + start
            for x in 0..<outputWidth {
                target[0] = row[x * 3]
                target[1] = row[x * 3 + 1]
                target[2] = row[x * 3 + 2]
                target += step
            }
        }
        nextOutput = y + 1
        try rowDone?(y)
    }
}

@available(*, unavailable)
extension ResampleStream: Sendable {}
