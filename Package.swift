// swift-tools-version:6.1
// bookpipe: turns messy book lists into a clean, enriched library.
// Every target builds in Swift 6 language mode (the default for tools 6.x) with strict concurrency.
import PackageDescription

/// The property-testing library, for test targets only (never linked into the tool).
let propertyBased: Target.Dependency = .product(name: "PropertyBased", package: "swift-property-based")

let package = Package(
    name: "bookpipe",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "bookpipe", targets: ["bookpipe"]),
        .library(name: "BookpipeCore", targets: ["BookpipeCore"]),
        .library(name: "BookpipePipeline", targets: ["BookpipePipeline"]),
        .library(name: "BookpipeIngest", targets: ["BookpipeIngest"]),
        .library(name: "BookpipeLibrary", targets: ["BookpipeLibrary"]),
        .library(name: "BookpipeStore", targets: ["BookpipeStore"]),
        .library(name: "BookpipePostgres", targets: ["BookpipePostgres"]),
        .library(name: "BookpipeHTTP", targets: ["BookpipeHTTP"]),
        .library(name: "BookpipeEnrichment", targets: ["BookpipeEnrichment"]),
        .library(name: "BookpipeCatalog", targets: ["BookpipeCatalog"]),
        .library(name: "BookpipeImaging", targets: ["BookpipeImaging"]),
        .library(name: "BookpipeStages", targets: ["BookpipeStages"]),
        .library(name: "BookpipePipelines", targets: ["BookpipePipelines"]),
        .library(name: "BookpipeExport", targets: ["BookpipeExport"]),
        .library(name: "BookpipeReport", targets: ["BookpipeReport"]),
        .library(name: "BookpipeScan", targets: ["BookpipeScan"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        // `bookpipe review serve` only (BookpipeReviewServer; docs/decisions/0023).
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // Tests only: property-based tests in Swift Testing (issue 24).
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        // C libraries. libcsv ships no .pc file: it is linked by the modulemap.
        .systemLibrary(name: "CLibCSV", path: "Sources/CLibCSV", providers: [.apt(["libcsv-dev"])]),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
                       providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CEditLine", path: "Sources/CEditLine", pkgConfig: "libedit",
                       providers: [.apt(["libedit-dev"])]),
        // sync_file_range (glibc declares it for _GNU_SOURCE only): the bulk import's write-out.
        .systemLibrary(name: "CLinuxFileIO", path: "Sources/CLinuxFileIO"),
        // libjpeg's error handling uses setjmp/longjmp, which must stay in C.
        .target(name: "CJPEGShim", path: "Sources/CJPEGShim",
                linkerSettings: [.linkedLibrary("jpeg")]),

        .target(name: "BookpipeCore"),
        .target(name: "BookpipePipeline",
                dependencies: ["BookpipeCore", .product(name: "Yams", package: "Yams")]),
        .target(name: "BookpipeIngest", dependencies: ["BookpipeCore", "CLibCSV"]),
        // The library contract (docs/decisions/0016): the store protocols every module above the
        // store speaks, their value types, claims with leases, and the product's rules over values.
        .target(name: "BookpipeLibrary", dependencies: ["BookpipeCore"]),
        // The engines: SQLite through GRDB. Storage only; the rules live in BookpipeLibrary.
        .target(name: "BookpipeStore",
                dependencies: ["BookpipeCore", "BookpipeLibrary", "CLinuxFileIO", .product(name: "GRDB", package: "GRDB.swift"),
                               .product(name: "GRDBSQLite", package: "GRDB.swift")]),
        // The PostgreSQL engine (issue 28, docs/decisions/0025): libpq, no GRDB. Storage only.
        .target(name: "BookpipePostgres", dependencies: ["BookpipeCore", "BookpipeLibrary", "CLibPQ"]),
        // The libcurl client and the transport side of the retry, rate and reachability policies,
        // shared by enrichment and the scan backend's client.
        .target(name: "BookpipeHTTP", dependencies: ["BookpipeCore", "BookpipePipeline", "CCurl"]),
        .target(name: "BookpipeEnrichment",
                dependencies: ["BookpipeCore", "BookpipePipeline", "BookpipeHTTP", "BookpipeLibrary"]),
        // The local Open Library catalogue: its own SQLite file (GRDB; decisions 0008, 0020), the
        // dump import and the catalogue as a metadata source. Not the library.
        .target(name: "BookpipeCatalog",
                dependencies: ["BookpipeCore", "BookpipePipeline", "BookpipeEnrichment",
                               .product(name: "GRDB", package: "GRDB.swift")]),
        .target(name: "BookpipeImaging", dependencies: ["CTurboJPEG", "CJPEGShim"]),
        // The vision backend's scan protocol (upload, server-sent events, cleanup) and the job
        // runner (429 pauses, retries, fallback provider) for `bookpipe scan`.
        .target(name: "BookpipeScan",
                dependencies: ["BookpipeCore", "BookpipePipeline", "BookpipeImaging", "BookpipeHTTP"]),
        // Data-quality metrics (over the figures the library computes) and their renderers; the HTML
        // templates are embedded in the binary at build time.
        .target(name: "BookpipeReport",
                dependencies: ["BookpipeCore", "BookpipeLibrary", "BookpipeExport",
                               .product(name: "Mustache", package: "swift-mustache")],
                resources: [.embedInCode("Templates/report.html.mustache"), .embedInCode("Templates/report.css")]),
        .target(name: "BookpipeStages",
                dependencies: ["BookpipeCore", "BookpipePipeline", "BookpipeIngest", "BookpipeLibrary",
                               "BookpipeHTTP", "BookpipeEnrichment", "BookpipeCatalog", "BookpipeReport", "BookpipeExport",
                               "BookpipeImaging", "BookpipeScan"]),
        // The built-in pipeline files, embedded in the binary at build time; their guides are docs.
        .target(name: "BookpipePipelines", path: "pipelines", exclude: ["csv-import.md", "enrich.md", "reenrich-library.md", "scan-import.md", "scan-photos.md"],
                resources: [.embedInCode("csv-import.yaml"), .embedInCode("enrich.yaml"),
                            .embedInCode("reenrich-library.yaml"), .embedInCode("scan-import.yaml"),
                            .embedInCode("scan-photos.yaml")]),
        // The export contract (DESIGN.md §6): what other programs read, so not in the executable.
        .target(name: "BookpipeExport", dependencies: ["BookpipeCore", "BookpipeLibrary"]),
        // The review queue's logic (list, show with spine crops, verify / edit / choose, cleanup);
        // the command line only parses and calls it.
        .target(name: "BookpipeReview",
                dependencies: ["BookpipeCore", "BookpipeLibrary", "BookpipeImaging",
                               .product(name: "Mustache", package: "swift-mustache")],
                resources: [.embedInCode("Templates/review-sheet.html.mustache")]),
        // `bookpipe review serve`: the review queue as a local web app on 127.0.0.1 (token, CSRF,
        // optimistic versions, undo; docs/decisions/0023). The only target that links Hummingbird.
        .target(name: "BookpipeReviewServer",
                dependencies: ["BookpipeCore", "BookpipeLibrary", "BookpipeReview", "BookpipeImaging",
                               .product(name: "Hummingbird", package: "hummingbird"),
                               .product(name: "Mustache", package: "swift-mustache")],
                resources: [.embedInCode("Templates/review-page.html.mustache"), .embedInCode("Templates/review.js"),
                            .embedInCode("Templates/review.css")]),
        // Test support: loopback HTTP server, fake Open Library / Google Books, fake scan backend
        // (it reads uploaded JPEGs' headers with the imaging core).
        .target(name: "BookpipeTesting",
                dependencies: ["BookpipeCore", "BookpipeStore", "BookpipeImaging"]),
        // The fakes as a program, for benchmarks/enrichment, benchmarks/scan and the README's demo.
        .executableTarget(name: "bookpipe-fake-services", dependencies: ["BookpipeTesting"],
                          path: "Sources/BookpipeFakeServices"),
        // jemalloc replaces glibc's malloc in the tool: the pipeline allocates records on one thread
        // and frees them on another, which glibc serialises on its arena locks (docs/decisions/0006).
        .executableTarget(name: "bookpipe",
                          dependencies: ["BookpipeStages", "BookpipePipelines", "BookpipeStore", "BookpipePostgres", "BookpipeImaging", "BookpipeHTTP", "BookpipeEnrichment", "BookpipeCatalog", "BookpipeScan",
                                         "BookpipeExport", "BookpipeReport", "BookpipeReview", "BookpipeReviewServer", "CEditLine",
                                         .product(name: "ArgumentParser", package: "swift-argument-parser")],
                          linkerSettings: [.linkedLibrary("jemalloc", .when(platforms: [.linux]))]),

        .testTarget(name: "BookpipeCoreTests", dependencies: ["BookpipeCore", "BookpipeTesting", propertyBased]),
        .testTarget(name: "BookpipePipelineTests", dependencies: ["BookpipePipeline", "BookpipeCore", propertyBased]),
        .testTarget(name: "BookpipeIngestTests", dependencies: ["BookpipeIngest", "BookpipeCore", "BookpipeTesting"],
                    resources: [.copy("Inputs")]),
        .testTarget(name: "BookpipeLibraryTests", dependencies: ["BookpipeLibrary", "BookpipeCore"]),
        // The library contract's suite, run against every engine (docs/decisions/0016).
        .testTarget(name: "BookpipeLibraryContractTests",
                    dependencies: ["BookpipeLibrary", "BookpipeStore", "BookpipePostgres", "BookpipeCore", "BookpipeTesting",
                                   "BookpipeIngest"]),
        .testTarget(name: "BookpipeStoreTests",
                    dependencies: ["BookpipeStore", "BookpipeCore", "BookpipeTesting", "BookpipeImaging",
                                   .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "BookpipeHTTPTests",
                    dependencies: ["BookpipeHTTP", "BookpipeTesting", "BookpipePipeline"]),
        .testTarget(name: "BookpipeEnrichmentTests",
                    dependencies: ["BookpipeEnrichment", "BookpipeCatalog", "BookpipeHTTP", "BookpipeTesting", "BookpipeCore",
                                   "BookpipePipeline", "BookpipeIngest", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "BookpipeImagingTests", dependencies: ["BookpipeImaging"]),
        .testTarget(name: "BookpipeScanTests",
                    dependencies: ["BookpipeScan", "BookpipeHTTP", "BookpipePipeline", "BookpipeCore",
                                   "BookpipeImaging", "BookpipeTesting", propertyBased]),
        .testTarget(name: "BookpipeStagesTests",
                    dependencies: ["BookpipeStages", "BookpipePipeline", "BookpipeStore", "BookpipeCore", "BookpipeIngest",
                                   "BookpipeEnrichment", "BookpipeHTTP", "BookpipeTesting", "BookpipeScan", "BookpipeImaging"]),
        .testTarget(name: "BookpipeReviewTests",
                    dependencies: ["BookpipeReview", "BookpipeStore", "BookpipeCore", "BookpipeImaging", "BookpipeStages",
                                   "BookpipePipeline", "BookpipeIngest"]),
        .testTarget(name: "BookpipeReviewServerTests",
                    dependencies: ["BookpipeReviewServer", "BookpipeReview", "BookpipeStore", "BookpipeCore",
                                   "BookpipeLibrary", "BookpipeStages", "BookpipePipeline", "BookpipeImaging"]),
        .testTarget(name: "BookpipeExportTests",
                    dependencies: ["BookpipeExport", "BookpipeStore", "BookpipeCore", "BookpipeIngest", propertyBased]),
        .testTarget(name: "BookpipeReportTests",
                    dependencies: ["BookpipeReport", "BookpipeExport", "BookpipeStore", "BookpipeCore", "BookpipeStages",
                                   "BookpipePipeline"]),
        .testTarget(name: "BookpipeTestingTests",
                    dependencies: ["BookpipeTesting", "BookpipeHTTP", "BookpipeImaging", "BookpipeCore"]),
        .testTarget(name: "BookpipeCLITests",
                    dependencies: ["BookpipeTesting", "BookpipeStore", "BookpipePostgres", "BookpipeCore", "BookpipeImaging",
                                   "BookpipeLibrary"]),
    ]
)
