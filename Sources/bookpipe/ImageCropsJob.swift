import BookpipeImaging

/// The work of `bookpipe image crops`, kept free of Foundation and ArgumentParser (like
/// ``PrepareJob``) so that ``Bookpipe/main()`` can run it straight from `CommandLine.arguments`:
/// with the decode on two cores, the parser's reflection and JSONDecoder are a visible part of
/// the time.
struct CropsJob: Sendable {
    var photo: String
    var boxesFile: String
    var outputDirectory: String
    var maxEdge: Int
    var quality: Int
    var maxPixels: Int

    /// Parses the arguments after `image crops`, or returns nil for anything the full parser
    /// should handle (help, unknown options, a missing or invalid value, not exactly one photo).
    init?(arguments: ArraySlice<String>) {
        guard let scanned = FastArguments(arguments, options: ["--boxes", "--output-dir", "--max-edge", "--quality",
                                                               "--max-pixels"]),
              scanned.positional.count == 1, let photo = scanned.positional.first,
              let boxesFile = scanned.values["--boxes"],
              let outputDirectory = scanned.values["--output-dir"], !outputDirectory.isEmpty,
              let maxEdge = scanned.integer("--max-edge", fallback: 800), maxEdge > 0,
              let quality = scanned.integer("--quality", fallback: 85), (1...100).contains(quality),
              let maxPixels = scanned.integer("--max-pixels", fallback: 100_000_000) else { return nil }
        self.init(photo: photo, boxesFile: boxesFile, outputDirectory: outputDirectory, maxEdge: maxEdge,
                  quality: quality, maxPixels: maxPixels)
    }

    init(photo: String, boxesFile: String, outputDirectory: String, maxEdge: Int, quality: Int, maxPixels: Int) {
        self.photo = photo
        self.boxesFile = boxesFile
        self.outputDirectory = outputDirectory
        self.maxEdge = maxEdge
        self.quality = quality
        self.maxPixels = maxPixels
    }

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
                if let note = crop.note { writeError("\(photo): box \(index + 1): note: \(note)") }
            }
            return 0
        } catch {
            writeError("error: \(error)")
            return 1
        }
    }

    /// Runs `image crops` without the argument parser and JSONDecoder when the arguments and the
    /// boxes file are simple; returns the exit code, or nil when the full path should take over
    /// (which also produces the usage and JSON error messages).
    static func runFastPath(_ arguments: [String]) -> Int32? {
        guard arguments.count > 3, arguments[1] == "image", arguments[2] == "crops",
              let job = CropsJob(arguments: arguments.dropFirst(3)) else { return nil }
        guard let text = try? FileIO.read(job.boxesFile), let boxes = BoxList.parse(text) else { return nil }
        do throws(ImagingError) {
            try FileIO.makeDirectory(job.outputDirectory)
        } catch {
            return nil  // the full path prints the usual message
        }
        return job.run(boxes: boxes)
    }
}

/// A strict reader for the boxes file's usual form: a JSON array of objects with exactly the
/// number members `x`, `y`, `width` and `height`. Anything else (other members, strings,
/// escapes, malformed JSON) gives nil, and the caller falls back to JSONDecoder, which accepts
/// or explains it.
enum BoxList {
    /// The boxes in `json`, or nil when it is not in the simple form.
    static func parse(_ json: [UInt8]) -> [NormalizedBox]? {
        var reader = Reader(bytes: json)
        guard reader.take(UInt8(ascii: "[")) else { return nil }
        var boxes: [NormalizedBox] = []
        if !reader.take(UInt8(ascii: "]")) {
            repeat {
                guard let box = reader.box() else { return nil }
                boxes.append(box)
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "]")) else { return nil }
        }
        reader.skipSpace()
        return reader.isAtEnd ? boxes : nil
    }

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        var isAtEnd: Bool { position == bytes.count }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
        }

        /// Skips white space, then `byte` if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        mutating func box() -> NormalizedBox? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var values: [String: Double] = [:]
            repeat {
                guard let key = key(), take(UInt8(ascii: ":")), let value = number(),
                      ["x", "y", "width", "height"].contains(key), values[key] == nil else { return nil }
                values[key] = value
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")), let x = values["x"], let y = values["y"],
                  let width = values["width"], let height = values["height"] else { return nil }
            return NormalizedBox(x: x, y: y, width: width, height: height)
        }

        mutating func key() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
                if bytes[position] == UInt8(ascii: "\\") || bytes[position] < 0x20 { return nil }
                position += 1
            }
            guard position < bytes.count else { return nil }
            defer { position += 1 }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
        mutating func number() -> Double? {
            skipSpace()
            let start = position
            func digits() -> Int {
                let first = position
                while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) { position += 1 }
                return position - first
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
            let integerStart = position
            let integerDigits = digits()
            guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard digits() > 0 else { return nil }
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                    position += 1
                }
                guard digits() > 0 else { return nil }
            }
            return Double(String(decoding: bytes[start..<position], as: UTF8.self))
        }
    }
}
