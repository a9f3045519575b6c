// swift-tools-version:6.1
// bookpipe's benchmarks: a separate package so the main package never pulls in package-benchmark.
// Run from this folder: `swift package benchmark` (see README.md).
import PackageDescription

let package = Package(
    name: "bookpipe-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Named explicitly: a path dependency is otherwise named after its folder.
        .package(name: "bookpipe", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // package-benchmark finds suites only when their parent folder is named `Benchmarks`.
        .executableTarget(
            name: "ImagingBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "BookpipeImaging", package: "bookpipe"),
            ],
            path: "Benchmarks/ImagingBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
