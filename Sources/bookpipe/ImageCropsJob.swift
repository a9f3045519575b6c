import BookpipeImaging

/// The work of `bookpipe image crops` (``ImageCommand/Crops`` parses and validates the arguments
/// and reads the boxes): cuts the crops and prints what was written.
///
/// The crops are the job's own files in the output folder: `spine_` + a number of two or more
/// digits + `.jpg`. An earlier run's crops are replaced only with `overwrite`, and then those the
/// new boxes do not replace are removed, so the folder never mixes two photos' crops. No other
/// file is touched, and neither the photo nor the boxes file is ever written over or removed.
struct CropsJob: Sendable {
    var photo: String
    var boxesFile: String
    var outputDirectory: String
    var maxEdge: Int
    var quality: Int
    var maxPixels: Int
    var overwrite: Bool

    /// The crop file names for `count` boxes: `spine_01.jpg`, … (more digits past 99).
    static func names(count: Int) -> [String] {
        let digits = max(2, String(count).count)
        return (0..<count).map { index in
            var number = String(index + 1)
            while number.count < digits { number = "0" + number }
            return "spine_\(number).jpg"
        }
    }

    /// Whether `name` is one of this job's crop names (`spine_` + two or more digits + `.jpg`).
    static func isCropName(_ name: String) -> Bool {
        guard name.hasPrefix("spine_"), name.hasSuffix(".jpg") else { return false }
        let number = name.dropFirst("spine_".count).dropLast(".jpg".count)
        return number.count >= 2 && number.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The crops of an earlier run in the output folder, sorted by name.
    func earlierCrops() -> [String] {
        FileIO.names(inFolder: outputDirectory).filter(Self.isCropName).sorted()
    }

    /// Why the crops cannot be written as asked, or nil when they can: a crop (or an earlier crop
    /// to remove) that is the photo or the boxes file is refused whatever `overwrite` says; an
    /// earlier run's crops are refused without it.
    func outputConflict(boxCount: Int) -> String? {
        var inputs: [FileIdentity: (String, String)] = [:]
        if let identity = FileIO.identity(of: photo) { inputs[identity] = (photo, "photo") }
        if let identity = FileIO.identity(of: boxesFile) { inputs[identity] = (boxesFile, "boxes file") }
        let earlier = earlierCrops()
        for name in Set(Self.names(count: boxCount) + earlier).sorted() {
            let path = PrepareJob.join(outputDirectory, name)
            if let identity = FileIO.identity(of: path), let (input, what) = inputs[identity] {
                return PrepareJob.isInputMessage(output: path, input: input, what: what)
            }
        }
        guard !overwrite, let first = earlier.first, let last = earlier.last else { return nil }
        let crops = earlier.count == 1 ? "a spine crop (\(first))" : "\(earlier.count) spine crops (\(first) … \(last))"
        return "\(outputDirectory) already holds \(crops) from an earlier run; pass --overwrite to replace them "
            + "(and remove those the new boxes do not replace), or choose another --output-dir."
    }

    /// Cuts the crops of `boxes`, writes `spine_01.jpg`, `spine_02.jpg`, … in box order, prints
    /// one line per crop (and each note to standard error); with `overwrite`, then removes the
    /// earlier crops not replaced and says so. Returns the exit code: 0, or 1 after printing the
    /// error.
    func run(boxes: [NormalizedBox]) -> Int32 {
        let cropper = SpineCropper(decoder: ImageDecoder(maxPixels: maxPixels), quality: quality)
        do throws(ImagingError) {
            let earlier = overwrite ? earlierCrops() : []
            let bytes = try FileIO.read(photo)
            let crops = try cropper.crops(photo: bytes, file: photo, boxes: boxes, maxEdge: maxEdge)
            let names = Self.names(count: crops.count)
            for (index, crop) in crops.enumerated() {
                let output = PrepareJob.join(outputDirectory, names[index])
                try FileIO.write(crop.jpeg, to: output, replacing: overwrite)
                print("\(output): \(crop.width)x\(crop.height), \(crop.jpeg.count) bytes, from \(crop.rect.width)x\(crop.rect.height) at (\(crop.rect.x),\(crop.rect.y))")
                if let note = crop.note { printError("\(photo): box \(index + 1): note: \(note)") }
            }
            let leftOver = earlier.filter { !names.contains($0) }
            for name in leftOver { try FileIO.remove(PrepareJob.join(outputDirectory, name)) }
            if let first = leftOver.first, let last = leftOver.last {
                let what = leftOver.count == 1 ? "1 earlier crop (\(first))" : "\(leftOver.count) earlier crops (\(first) … \(last))"
                printError("\(outputDirectory): removed \(what) that the new boxes do not replace.")
            }
            return 0
        } catch {
            printError("error: \(error.imageCommandMessage)")
            return 1
        }
    }
}
