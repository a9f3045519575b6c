// Fuzz target: the JPEG header guard and decoding with libjpeg-turbo: EXIF orientation, DCT
// scales, region decode. No input may crash, and none may allocate more than the pixel limit
// allows (the header guard refuses bigger pictures before any pixel memory is allocated; run
// with -rss_limit_mb and -malloc_limit_mb to hold it to that).
import BookpipeImaging

/// 4 megapixels: 16 MB of RGBA at most per decode.
private let decoder = ImageDecoder(maxPixels: 4_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJPEGDecode(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let header = try? decoder.header(of: input, file: "fuzz.jpg") else { return 0 }
    precondition(header.storedWidth * header.storedHeight <= decoder.maxPixels, "the guard let a too big picture through")
    // The last byte picks the scale and a region (a quarter of the picture, or all of it).
    let selector = Int(input.last ?? 0)
    let scales: [DecodeScale] = [.full, .half, .quarter, .eighth]
    let scale = scales[selector % scales.count]
    let box: NormalizedBox? = selector & 4 == 0 ? nil : NormalizedBox(x: 0.25, y: 0.25, width: 0.5, height: 0.5)
    if let pixels = try? decoder.decode(input, file: "fuzz.jpg", scale: scale, box: box) {
        precondition(pixels.width * pixels.height <= decoder.maxPixels, "decoded more pixels than the limit")
    }
    return 0
}
