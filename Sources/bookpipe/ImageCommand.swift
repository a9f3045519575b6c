import ArgumentParser
import BookpipeImaging
import Foundation

/// `bookpipe image`: prepares shelf photos for vision models and cuts spine crops.
///
/// Exit codes: 0 when every photo was written, 1 when any failed (each failure is printed to
/// standard error naming the file), 2 for a usage error found here (unknown preset, bad boxes).
struct ImageCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "image",
        abstract: "Prepare shelf photos for vision models and cut spine crops.",
        subcommands: [Prepare.self, Crops.self])

    /// `bookpipe image prepare PHOTO… --preset cloudflare --output-dir DIR`
    struct Prepare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prepare",
            abstract: "Resize and re-encode photos for a vision model (one output per photo, same base name, .jpg).",
            discussion: """
            Presets: gemini (3072 px, quality 90, 400-600 KB), cloudflare (1536 px, quality 85, 150-300 KB), \
            upload (1920 px, quality 85). Quality is lowered (down to 60) when the output is larger than the \
            preset's target; --fixed-quality turns that off. Photos are processed concurrently, one per core. \
            An output is never one of the photos (same file, hard or symbolic link), and a file already in the \
            output folder is replaced only with --overwrite.
            """)

        @Argument(help: "JPEG photos.")
        var photos: [String]

        @Option(help: "gemini, cloudflare or upload.")
        var preset: String = "cloudflare"

        @Option(name: .customLong("output-dir"), help: "Folder for the outputs (created if missing).")
        var outputDirectory: String

        @Flag(help: "Encode once at the preset's quality, without aiming at its size range.")
        var fixedQuality = false

        @Flag(help: "Replace output files that exist already (never one of the photos).")
        var overwrite = false

        @OptionGroup var sizeLimit: PhotoSizeLimit

        func run() async throws {
            guard let preset = ImagePreset.named(preset) else {
                throw usage("unknown preset \"\(preset)\"; use gemini, cloudflare or upload")
            }
            let job = PrepareJob(photos: photos, preset: preset, outputDirectory: outputDirectory,
                                 fixedQuality: fixedQuality, maxPixels: sizeLimit.maxPixels, overwrite: overwrite)
            guard let outputs = job.outputPaths() else {
                throw usage(job.duplicateMessage() ?? "two photos would be written to the same file")
            }
            if let conflict = job.outputConflict(outputs) { throw usage(conflict) }
            try makeDirectory(outputDirectory)
            let failures = await job.run(outputs: outputs)
            if failures > 0 { throw ExitCode(1) }
        }
    }

    /// `bookpipe image crops PHOTO --boxes BOXES.json --output-dir DIR [--max-edge 800]`
    struct Crops: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "crops",
            abstract: "Cut spine crops out of a shelf photo (spine_01.jpg, spine_02.jpg, ... in box order).",
            discussion: """
            BOXES.json is a JSON array of {"x", "y", "width", "height"} in fractions (0-1) of the upright photo. \
            An invalid box (zero size, entirely outside) gives the whole photo, with a note on standard error. \
            A folder holding spine crops from an earlier run is refused; with --overwrite they are replaced and \
            those the new boxes do not replace are removed (no other file is touched).
            """)

        @Argument(help: "A JPEG photo.")
        var photo: String

        @Option(help: "JSON file with the boxes.")
        var boxes: String

        @Option(name: .customLong("output-dir"), help: "Folder for the crops (created if missing).")
        var outputDirectory: String

        @Option(help: "Longest side of each crop in pixels (smaller crops are not enlarged).")
        var maxEdge = 800

        @Option(help: "JPEG quality of the crops.")
        var quality = 85

        @Flag(help: "Replace the spine crops of an earlier run in the output folder (and remove those left over).")
        var overwrite = false

        @OptionGroup var sizeLimit: PhotoSizeLimit

        func run() async throws {
            guard maxEdge > 0 else { throw usage("--max-edge must be positive, not \(maxEdge)") }
            guard (1...100).contains(quality) else { throw usage("--quality must be within 1...100, not \(quality)") }
            let list: [NormalizedBox]
            do {
                list = try JSONDecoder().decode([NormalizedBox].self, from: Data(contentsOf: URL(fileURLWithPath: boxes)))
            } catch let error as DecodingError {
                throw usage("\(boxes): not a JSON array of {x, y, width, height} (\(describe(error)))")
            } catch {
                throw usage("\(error)")
            }
            guard !list.isEmpty else {
                printError("\(boxes): the list holds no boxes; no crops written.")
                return
            }
            let job = CropsJob(photo: photo, boxesFile: boxes, outputDirectory: outputDirectory, maxEdge: maxEdge,
                               quality: quality, maxPixels: sizeLimit.maxPixels, overwrite: overwrite)
            if let conflict = job.outputConflict(boxCount: list.count) { throw usage(conflict) }
            try makeDirectory(outputDirectory)
            let code = job.run(boxes: list)
            if code != 0 { throw ExitCode(code) }
        }
    }
}

/// The limit both image commands put on a photo before decoding it (a guard against
/// decompression bombs); its default is ``ImageDecoder``'s.
struct PhotoSizeLimit: ParsableArguments {
    @Option(help: "Refuse photos whose header claims more pixels than this.")
    var maxPixels = ImageDecoder().maxPixels
}

extension Data {
    fileprivate init(contentsOf url: URL) throws(ImagingError) {
        do {
            try self.init(contentsOf: url, options: [])
        } catch {
            let reason = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.localizedDescription ?? error.localizedDescription
            throw ImagingError(.unreadableFile, file: url.path, detail: reason)
        }
    }
}

extension ImagingError {
    /// The message the image commands print: the error's, and for a photo over the pixel limit
    /// the option that raises it (which only these commands have).
    var imageCommandMessage: String {
        code == .tooManyPixels ? description + " --max-pixels raises the limit; use it only for a file you trust." : description
    }
}

/// Creates the output folder and its missing parents, or prints why not and exits with 1.
private func makeDirectory(_ path: String) throws {
    do throws(ImagingError) {
        try FileIO.makeDirectory(path)
    } catch {
        printError("error: \(path): cannot create the output folder (\(error.detail)).")
        throw ExitCode(1)
    }
}

/// Writes a line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Prints a usage error and returns the exit code for it (2).
private func usage(_ message: String) -> ExitCode {
    printError("error: \(message)")
    return ExitCode(2)
}

private func describe(_ error: DecodingError) -> String {
    switch error {
    case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context), .valueNotFound(_, let context):
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    @unknown default:
        return "\(error)"
    }
}
