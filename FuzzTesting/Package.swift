// swift-tools-version:6.1
// bookpipe's fuzz targets (libFuzzer): a separate package so the main package's `swift build` and
// `swift test` never see fuzzer flags. One executable per target, each a `main.swift` holding only
// the `@_cdecl("LLVMFuzzerTestOneInput")` entry. Build and run them with `run.sh` (see README.md);
// the only recipe that keeps both coverage and the address sanitizer in every module on this
// toolchain is
//
//     swift build --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --product FuzzCSVReader
import PackageDescription

/// A fuzz target: `Sources/<name>/main.swift`, depending on the named products of bookpipe.
func fuzzTarget(_ name: String, _ products: [String]) -> Target {
    .executableTarget(name: name, dependencies: products.map { .product(name: $0, package: "bookpipe") })
}

let package = Package(
    name: "bookpipe-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named explicitly: a path dependency is otherwise named after its folder.
        .package(name: "bookpipe", path: ".."),
    ],
    targets: [
        fuzzTarget("FuzzCSVReader", ["BookpipeIngest", "BookpipeCore"]),
        fuzzTarget("FuzzScanResultJSON", ["BookpipeIngest", "BookpipeCore"]),
        fuzzTarget("FuzzServerSentEvents", ["BookpipeScan"]),
        fuzzTarget("FuzzJPEGDecode", ["BookpipeImaging"]),
        fuzzTarget("FuzzPipelineFile", ["BookpipePipeline"]),
        fuzzTarget("FuzzTextParsing", ["BookpipeCore"]),
        fuzzTarget("FuzzOpenLibraryResponse", ["BookpipeEnrichment", "BookpipeCore"]),
        fuzzTarget("FuzzGoogleBooksResponse", ["BookpipeEnrichment", "BookpipeCore"]),
    ]
)
