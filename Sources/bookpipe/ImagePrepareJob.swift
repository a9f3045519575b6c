import BookpipeImaging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The work of `bookpipe image prepare`, kept free of Foundation and ArgumentParser so that the
/// fast path in ``Bookpipe/main()`` can run it straight from `CommandLine.arguments`: for a
/// single photo, process start-up is a large part of the time.
struct PrepareJob: Sendable {
    var photos: [String]
    var preset: ImagePreset
    var outputDirectory: String
    var fixedQuality: Bool
    var maxPixels: Int

    /// Parses the arguments after `image prepare`, or returns nil for anything the full parser
    /// should handle (help, unknown options, a missing value, an unknown preset, no photos).
    init?(arguments: ArraySlice<String>) {
        guard let scanned = FastArguments(arguments, options: ["--preset", "--output-dir", "--max-pixels"],
                                          flags: ["--fixed-quality"]),
              !scanned.positional.isEmpty,
              let outputDirectory = scanned.values["--output-dir"], !outputDirectory.isEmpty,
              let preset = ImagePreset.named(scanned.values["--preset"] ?? "cloudflare"),
              let maxPixels = scanned.integer("--max-pixels", fallback: 100_000_000) else { return nil }
        let photos = scanned.positional
        let fixedQuality = scanned.flags.contains("--fixed-quality")
        self.init(photos: photos, preset: preset, outputDirectory: outputDirectory,
                  fixedQuality: fixedQuality, maxPixels: maxPixels)
    }

    init(photos: [String], preset: ImagePreset, outputDirectory: String, fixedQuality: Bool, maxPixels: Int) {
        self.photos = photos
        self.preset = preset
        self.outputDirectory = outputDirectory
        self.fixedQuality = fixedQuality
        self.maxPixels = maxPixels
    }

    /// The output file of each photo (same base name, `.jpg`), or nil when two would collide.
    func outputPaths() -> [String]? {
        var seen = Set<String>()
        var outputs: [String] = []
        for photo in photos {
            let name = Self.outputName(photo)
            guard seen.insert(name).inserted else { return nil }
            outputs.append(Self.join(outputDirectory, name))
        }
        return outputs
    }

    /// Says which photos collide, or nil when none do.
    func duplicateMessage() -> String? {
        var seen: [String: String] = [:]
        for photo in photos {
            let name = Self.outputName(photo)
            if let earlier = seen[name] {
                return "\(photo) and \(earlier) would both be written to \(name); rename one"
            }
            seen[name] = photo
        }
        return nil
    }

    /// `dir/shelf.jpeg` → `shelf.jpg` (the last path component without its extension, plus `.jpg`).
    static func outputName(_ photo: String) -> String {
        var path = Substring(photo)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        let last = path.split(separator: "/", omittingEmptySubsequences: false).last ?? path
        var base = last
        if let dot = last.lastIndex(of: "."), dot != last.startIndex {
            base = last[..<dot]
        }
        return String(base) + ".jpg"
    }

    /// `directory` + "/" + `name`, without doubling the slash.
    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// Prepares every photo (a single one with decoding and resizing overlapped on two cores;
    /// several concurrently, one per core), writes the outputs, prints one line per photo and
    /// each failure to standard error. Returns the number of failures.
    func run(outputs: [String]) async -> Int {
        let cores = max(Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), 1)
        // With one photo per core the cores are busy already; a second thread per photo would
        // only add switching.
        let preparer = ImagePreparer(decoder: ImageDecoder(maxPixels: maxPixels),
                                     decodesInBackground: photos.count < cores)
        let fixedQuality = self.fixedQuality, preset = self.preset, photos = self.photos
        var results = [Result<Summary, ImagingError>?](repeating: nil, count: photos.count)
        if photos.count == 1 {
            results[0] = Self.prepare(preparer, photos[0], outputs[0], preset, fixedQuality)
        } else {
            await withTaskGroup(of: (Int, Result<Summary, ImagingError>).self) { group in
                var next = 0
                func start() {
                    let index = next
                    let photo = photos[index], output = outputs[index]
                    next += 1
                    group.addTask { (index, Self.prepare(preparer, photo, output, preset, fixedQuality)) }
                }
                while next < min(cores, photos.count) { start() }
                while let (index, result) = await group.next() {
                    results[index] = result
                    if next < photos.count { start() }
                }
            }
        }
        var failures = 0
        for (index, result) in results.enumerated() {
            switch result {
            case .success(let prepared):
                var line = "\(photos[index]) -> \(outputs[index]): \(prepared.width)x\(prepared.height), "
                    + "\(prepared.byteCount) bytes, quality \(prepared.quality)"
                if prepared.encodeCount > 1 { line += " (\(prepared.encodeCount) encodes)" }
                print(line)
                if let note = prepared.note { writeError("\(photos[index]): note: \(note)") }
            case .failure(let error):
                failures += 1
                writeError("error: \(error)")
            case nil:
                failures += 1
                writeError("error: \(photos[index]): not processed")
            }
        }
        if failures > 0 {
            writeError("\(failures) of \(photos.count) photos failed; the others were written to \(outputDirectory).")
        }
        return failures
    }

    /// What is printed about a written photo (the JPEG itself is dropped once written, so a
    /// batch does not keep every output in memory).
    struct Summary: Sendable {
        let width: Int
        let height: Int
        let byteCount: Int
        let quality: Int
        let encodeCount: Int
        let note: String?

        init(_ prepared: PreparedImage) {
            width = prepared.width
            height = prepared.height
            byteCount = prepared.jpeg.count
            quality = prepared.quality
            encodeCount = prepared.encodeCount
            note = prepared.note
        }
    }

    private static func prepare(_ preparer: ImagePreparer, _ photo: String, _ output: String, _ preset: ImagePreset,
                                _ fixedQuality: Bool) -> Result<Summary, ImagingError> {
        do throws(ImagingError) {
            let prepared = try preparer.prepare(photoAt: photo, preset: preset, fixedQuality: fixedQuality)
            try FileIO.write(prepared.jpeg, to: output)
            return .success(Summary(prepared))
        } catch {
            return .failure(error)
        }
    }

    /// Runs `image prepare` without the argument parser when the arguments are simple; returns
    /// the exit code, or nil when the full parser should take over (which also produces the
    /// usage messages).
    static func runFastPath(_ arguments: [String]) async -> Int32? {
        guard arguments.count > 3, arguments[1] == "image", arguments[2] == "prepare",
              let job = PrepareJob(arguments: arguments.dropFirst(3)),
              let outputs = job.outputPaths() else { return nil }
        do throws(ImagingError) {
            try FileIO.makeDirectory(job.outputDirectory)
        } catch {
            return nil  // the full path prints the usual message
        }
        return await job.run(outputs: outputs) > 0 ? 1 : 0
    }
}

/// Writes a line to standard error without Foundation.
func writeError(_ message: String) {
    var line = message
    line += "\n"
    line.withUTF8 { bytes in
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let written = write(2, base + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}
