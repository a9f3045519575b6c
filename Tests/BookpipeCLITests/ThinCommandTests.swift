import BookpipeTesting
import Foundation
import Testing

/// Every built-in command that runs a pipeline is thin over its file in `pipelines/` (issue 25): the
/// command and `bookpipe run pipelines/FILE` on the same input, with the same settings, leave the same
/// library — compared as `bookpipe export --format jsonl` writes it, byte for byte — and read the same
/// rows. What the command adds is only what its flags say.
@Suite(.timeLimit(.minutes(15)))
struct ThinCommandTests {
    static let samples = CLI.repositoryRoot.appendingPathComponent("samples")
    static let pipelines = CLI.repositoryRoot.appendingPathComponent("pipelines")
    static let offline = ["--catalog", "catalog.sqlite", "--offline", "--progress", "none"]

    /// A folder with the bundled catalogue indexed into `catalog.sqlite`.
    static func workspace() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        let catalog = try CLI.run(["catalog", "import", samples.appendingPathComponent("catalog/openlibrary-sample.txt").path,
                                   "--catalog", "catalog.sqlite", "--progress", "none"], in: directory)
        #expect(catalog.status == 0, "\(catalog.stderr)")
        return directory
    }

    /// The library as its export writes it.
    static func exported(_ library: String, in directory: URL) throws -> String {
        let export = try CLI.run(["export", "--format", "jsonl", "--library", library], in: directory)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(!export.stdout.isEmpty)
        return export.stdout
    }

    /// The summary's lines about what was read from each input.
    static func readLines(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains(" rows read, ") }
    }

    /// Runs `command` into `command.sqlite` and `run FILE` into `run.sqlite`; both must succeed and
    /// leave the same library.
    static func compare(_ command: [String], file: String, inputs: [String], settings: [String], in directory: URL,
                        prepare: (String) throws -> Void = { _ in }) throws {
        try prepare("command.sqlite")
        try prepare("run.sqlite")
        let byCommand = try CLI.run(command + inputs + settings + ["--library", "command.sqlite"], in: directory)
        let byFile = try CLI.run(["run", pipelines.appendingPathComponent(file).path] + inputs + settings
                                 + ["--library", "run.sqlite"], in: directory)
        #expect(byCommand.status == 0, "\(command): \(byCommand.stderr)")
        #expect(byFile.status == 0, "\(file): \(byFile.stderr)")
        // Sorted: photos are scanned several at once, and each one's line comes in the order its job started.
        #expect(readLines(byCommand.stderr).sorted() == readLines(byFile.stderr).sorted())
        #expect(try exported("command.sqlite", in: directory) == exported("run.sqlite", in: directory),
                "\(command) and run \(file) left different libraries")
    }

    @Test("import = run csv-import.yaml: the two sample exports read, stored and matched against the catalogue alike")
    func importIsItsFile() throws {
        let directory = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.compare(["import"], file: "csv-import.yaml",
                         inputs: ["goodreads_library_export.csv", "storygraph_export.csv"].map { Self.samples.appendingPathComponent($0).path },
                         settings: Self.offline, in: directory)
    }

    @Test("import-scan = run scan-import.yaml: the sample shelf scan and its photo, stored, queued and matched alike")
    func importScanIsItsFile() throws {
        let directory = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.compare(["import-scan"], file: "scan-import.yaml",
                         inputs: [Self.samples.appendingPathComponent("shelf-scan/scan.json").path],
                         settings: Self.offline, in: directory)
        for library in ["command.sqlite", "run.sqlite"] {
            let photos = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(library + ".photos").path)
            #expect(photos.count == 1, "\(library): the photo is copied for review")
        }
    }

    @Test("enrich = run enrich.yaml: the same stored rows matched alike")
    func enrichIsItsFile() throws {
        let directory = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let export = Self.samples.appendingPathComponent("goodreads_library_export.csv").path
        try Self.compare(["enrich"], file: "enrich.yaml", inputs: [], settings: Self.offline, in: directory) { library in
            let imported = try CLI.run(["import", export, "--no-enrich", "--progress", "none", "--library", library], in: directory)
            #expect(imported.status == 0, "\(imported.stderr)")
        }
    }

    @Test("scan = run scan-photos.yaml: the sample photos through a fake vision backend, stored and matched alike")
    func scanIsItsFile() throws {
        let directory = try Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photos = Self.samples.appendingPathComponent("scan-photos")
        let backend = FakeScanBackend(options: .init(jobDuration: .milliseconds(50), sidecarDirectory: photos))
        let url = try backend.start()
        defer { backend.stop() }
        try Self.compare(["scan"], file: "scan-photos.yaml", inputs: [photos.path], settings: Self.offline + ["--backend", url],
                         in: directory)
    }
}
