import BookpipeImaging

/// The work of `bookpipe image crops` (``ImageCommand/Crops`` parses and validates the arguments
/// and reads the boxes): cuts the crops and prints what was written.
struct CropsJob: Sendable {
    var photo: String
    var outputDirectory: String
    var maxEdge: Int
    var quality: Int
    var maxPixels: Int

    /// Cuts the crops of `boxes`, writes `spine_01.jpg`, `spine_02.jpg`, … in box order, prints
    /// one line per crop (and each note to standard error). Returns the exit code: 0, or 1 after
    /// printing the error.
    func run(boxes: [NormalizedBox]) -> Int32 {
        let cropper = SpineCropper(decoder: ImageDecoder(maxPixels: maxPixels), quality: quality)
        do throws(ImagingError) {
            let bytes = try FileIO.read(photo)
            let crops = try cropper.crops(photo: bytes, file: photo, boxes: boxes, maxEdge: maxEdge)
            let digits = max(2, String(crops.count).count)
            for (index, crop) in crops.enumerated() {
                var number = String(index + 1)
                while number.count < digits { number = "0" + number }
                let output = PrepareJob.join(outputDirectory, "spine_\(number).jpg")
                try FileIO.write(crop.jpeg, to: output)
                print("\(output): \(crop.width)x\(crop.height), \(crop.jpeg.count) bytes, from \(crop.rect.width)x\(crop.rect.height) at (\(crop.rect.x),\(crop.rect.y))")
                if let note = crop.note { printError("\(photo): box \(index + 1): note: \(note)") }
            }
            return 0
        } catch {
            printError("error: \(error)")
            return 1
        }
    }
}
