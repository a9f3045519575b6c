// The built-in pipelines: the YAML files in this folder, embedded in the binary at build time
// (SwiftPM's `embedInCode` resources), so `bookpipe import` works from any folder and runs exactly
// the file that is in the repository.

/// The pipeline files that ship inside the binary: the files in `pipelines/`, embedded at build time.
public enum BuiltinPipelines {
    /// A built-in pipeline file.
    public struct File: Sendable {
        /// Its name (`csv-import`), as `bookpipe run NAME` takes it.
        public let name: String
        /// Its path in the repository, used in messages (`pipelines/csv-import.yaml`).
        public let path: String
        /// Its YAML text.
        public let text: String
    }

    /// Every built-in pipeline, by name.
    public static let files: [String: File] = Dictionary(uniqueKeysWithValues: [
        File(name: "csv-import", path: "pipelines/csv-import.yaml", text: text(PackageResources.csv_import_yaml)),
        File(name: "enrich", path: "pipelines/enrich.yaml", text: text(PackageResources.enrich_yaml)),
        File(name: "reenrich-library", path: "pipelines/reenrich-library.yaml",
             text: text(PackageResources.reenrich_library_yaml)),
        File(name: "scan-import", path: "pipelines/scan-import.yaml", text: text(PackageResources.scan_import_yaml)),
        File(name: "scan-photos", path: "pipelines/scan-photos.yaml", text: text(PackageResources.scan_photos_yaml)),
    ].map { ($0.name, $0) })

    /// The built-in pipeline of that name.
    public static func named(_ name: String) -> File? { files[name] }

    private static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
