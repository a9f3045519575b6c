import BookpipeCore
import BookpipeImaging
import BookpipePipeline
import BookpipeScan
import BookpipeStore
import BookpipeTesting
import Foundation
import Testing

/// A vision backend that cuts its event stream in the middle of an event (issue 24): the scan
/// stages on a real library file against the fake backend, which cuts the first connection of
/// every photo's job at another byte of its second `result` event, by closing (FIN) or resetting
/// (RST) the connection, under chunked and connection-framed bodies. (About 7 s on an idle
/// machine; the limit is a hang guard.)
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ScanStreamCutTests {
    static let titles = ["DUNE", "EMMA", "IT"]
    static let detections = titles.map { FakeScanBackend.Detection(title: $0, author: "AUTHOR OF \($0)", confidence: 0.9) }

    /// The bytes of the event that is cut: the job's second `result`, as the fake writes it.
    static func cutEventLength() throws -> Int {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = String(decoding: try encoder.encode(detections[1]), as: UTF8.self)
        return FakeServerSentEvent(name: "result", id: "2", data: data).encoded(lineEnding: "\n").utf8.count
    }

    /// A small JPEG whose 8×8 blocks spell `number` in black and white (no two photos alike, so
    /// none is skipped as a copy of another).
    static func photo(_ number: Int, in folder: URL) throws -> String {
        var pixels = PixelBuffer(width: 64, height: 48, red: 255, green: 255, blue: 255)
        for bit in 0..<16 where number & (1 << bit) != 0 {
            let (left, top) = ((bit % 8) * 8, (bit / 8) * 8)
            for x in left..<(left + 8) {
                for y in top..<(top + 8) { pixels.setPixel(x: x, y: y, red: 0, green: 0, blue: 0) }
            }
        }
        let name = String(format: "cut-%04d.jpg", number)
        let path = folder.appendingPathComponent(name).path
        try Data(try JPEGEncoder(quality: 90).encode(pixels, file: name)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("A stream cut at every byte of a result event, closed or reset, chunked or not: every photo's books are stored exactly once, none by the fallback provider",
          arguments: [StreamedBody.Framing.chunked, .untilClose])
    func everyByteOffset(framing: StreamedBody.Framing) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bookpipe-cut-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        var faults: [String: [FakeScanBackend.Fault]] = [:]
        var photos: [String] = []
        // Every byte offset, closed at even offsets and reset at odd ones (ScanJobRunnerTests cuts
        // every offset both ways without the store), so each framing is 201 photos.
        for offset in 0...(try Self.cutEventLength()) {
            let cut: FakeScanBackend.StreamCut = offset % 2 == 0 ? .close : .reset
            let path = try Self.photo(photos.count, in: folder)
            photos.append(path)
            faults[(path as NSString).lastPathComponent] = [.cutStream(inResult: 2, afterBytes: offset, ending: cut)]
        }
        let detections = Dictionary(uniqueKeysWithValues: photos.map { (($0 as NSString).lastPathComponent, Self.detections) })
        let backend = FakeScanBackend(options: FakeScanBackend.Options(
            jobDuration: .zero, maxConcurrentJobs: 8, detectionsByFilename: detections, streamFraming: framing,
            faultsByFilename: faults))
        let base = try backend.start()
        defer { backend.stop() }
        let store = try LibraryStore(path: folder.appendingPathComponent("library.sqlite").path)
        let settings = ScanSettings(provider: .gemini, fallbackProvider: .cloudflare, concurrency: 4, reconnectDelay: .zero)
        let report = try await ScanPhotosPipelineTests.scan(photos, backend: base, store: store, settings: settings)

        #expect(ScanPhotosPipelineTests.failures(in: report).isEmpty)
        var stored: [String: [String]] = [:]
        try await store.forEachRecord { stored[$0.origin.file, default: []].append($0.title) }
        for (number, photo) in photos.enumerated() {
            let fault = faults[(photo as NSString).lastPathComponent]?.first.map(String.init(describing:)) ?? ""
            #expect(stored[photo]?.sorted() == Self.titles.sorted(), "photo \(number): \(fault)")
        }
        #expect(stored.values.map(\.count).reduce(0, +) == photos.count * Self.titles.count)
        #expect(backend.uploads.allSatisfy { $0.provider == "gemini" })
        #expect(backend.uploads.count == photos.count)
        // Every cut job reconnected once, resuming after the last result it fully received.
        let resumedFrom = backend.streamConnections.filter { $0.lastEventID != nil }.compactMap(\.lastEventID)
        #expect(Set(resumedFrom).isSubset(of: ["1", "2"]))
        #expect(backend.streamConnections.count == 2 * photos.count)
    }
}
