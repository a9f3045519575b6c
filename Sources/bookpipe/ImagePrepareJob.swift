import BookpipeImaging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The work of `bookpipe image prepare` (``ImageCommand/Prepare`` parses and validates the
/// arguments): prepares each photo and prints what was written.
struct PrepareJob: Sendable {
    var photos: [String]
    var preset: ImagePreset
    var outputDirectory: String
    var fixedQuality: Bool
    var maxPixels: Int
    /// Whether an output file that exists already may be replaced (a photo never may).
    var overwrite: Bool

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

    /// Why the outputs cannot be written as asked, or nil when they can: an output that is one of
    /// the photos (the same file by name, hard link or symbolic link: equal device and inode) is
    /// refused whatever `overwrite` says; an output that exists already is refused without it.
    func outputConflict(_ outputs: [String]) -> String? {
        var photoByIdentity: [FileIdentity: String] = [:]
        for photo in photos {
            if let identity = FileIO.identity(of: photo) { photoByIdentity[identity] = photo }
        }
        for output in outputs {
            if let identity = FileIO.identity(of: output), let photo = photoByIdentity[identity] {
                return Self.isInputMessage(output: output, input: photo, what: "photo")
            }
        }
        guard !overwrite else { return nil }
        let existing = outputs.filter(FileIO.exists)
        return existing.isEmpty ? nil : Self.existingMessage(existing)
    }

    /// The message for an output that is an input.
    static func isInputMessage(output: String, input: String, what: String) -> String {
        "\(output) is the \(what) \(input) (the same file); bookpipe never writes over a file it reads. "
            + "Choose another --output-dir."
    }

    /// The message for outputs that exist already.
    static func existingMessage(_ existing: [String]) -> String {
        let shown = existing.prefix(3).joined(separator: ", ") + (existing.count > 3 ? ", …" : "")
        return existing.count == 1
            ? "\(shown) exists already; pass --overwrite to replace it, or choose another --output-dir."
            : "\(existing.count) outputs exist already (\(shown)); pass --overwrite to replace them, or choose another --output-dir."
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
        let fixedQuality = self.fixedQuality, preset = self.preset, photos = self.photos, overwrite = self.overwrite
        var results = [Result<Summary, ImagingError>?](repeating: nil, count: photos.count)
        if photos.count == 1 {
            results[0] = Self.prepare(preparer, photos[0], outputs[0], preset, fixedQuality, overwrite)
        } else {
            await withTaskGroup(of: (Int, Result<Summary, ImagingError>).self) { group in
                var next = 0
                func start() {
                    let index = next
                    let photo = photos[index], output = outputs[index]
                    next += 1
                    group.addTask { (index, Self.prepare(preparer, photo, output, preset, fixedQuality, overwrite)) }
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
                if let note = prepared.note { printError("\(photos[index]): note: \(note)") }
            case .failure(let error):
                failures += 1
                printError("error: \(error.imageCommandMessage)")
            case nil:
                failures += 1
                printError("error: \(photos[index]): not processed")
            }
        }
        if failures > 0 {
            printError("\(failures) of \(photos.count) photos failed; the others were written to \(outputDirectory).")
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
                                _ fixedQuality: Bool, _ overwrite: Bool) -> Result<Summary, ImagingError> {
        do throws(ImagingError) {
            let prepared = try preparer.prepare(photoAt: photo, preset: preset, fixedQuality: fixedQuality)
            try FileIO.write(prepared.jpeg, to: output, replacing: overwrite)
            return .success(Summary(prepared))
        } catch {
            return .failure(error)
        }
    }
}
