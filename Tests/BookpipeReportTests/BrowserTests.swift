import BookpipeCore
import BookpipeStore
import Foundation
import Testing
@testable import BookpipeReport

/// Opens the HTML report in a real headless Chromium (Debian's `chromium`, installed by
/// scripts/install-system-packages.sh --tests).
@Suite(.timeLimit(.minutes(5))) struct BrowserTests {
    static var chromium: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    func runChromium(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let binary = try #require(Self.chromium, "chromium is not installed: run scripts/install-system-packages.sh --tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                             "--user-data-dir=" + ReportFixture.temporaryPath("chromium-profile", extension: "d")] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("Chromium renders the page: a screenshot is made, the DOM holds the SVG charts, and no element or script came from data")
    func rendersInChromium() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        let page = ReportFixture.temporaryPath("page", extension: "html")
        try await Data(ReportRenderer.html(try QualityReportBuilder(store: store).build()).utf8).write(to: URL(fileURLWithPath: page))

        let dom = try runChromium(["--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        #expect(dom.output.components(separatedBy: "<svg").count - 1 == 6)
        for chart in ["states", "scores", "candidates", "confidence", "completeness", "sources"] {
            #expect(dom.output.contains("id=\"chart-\(chart)\""))
        }
        #expect(dom.output.contains("<rect"))
        #expect(!dom.output.lowercased().contains("<script"))
        #expect(dom.output.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

        let screenshot = ReportFixture.temporaryPath("shot", extension: "png")
        let shot = try runChromium(["--screenshot=" + screenshot, "--window-size=1280,1600", "file://" + page])
        #expect(shot.status == 0)
        let png = try Data(contentsOf: URL(fileURLWithPath: screenshot))
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        #expect(png.count > 20_000)
    }

    @Test("In Chromium, every drill-down link lands on an element with its id, the data stays text (no element from a title), and a right-to-left override stays inside its <bdi>")
    func drillDownLinksLand() async throws {
        let (store, _) = try await ReportFixture.makeLibrary()
        var report = try await QualityReportBuilder(store: store).build()
        report.checks = try CheckFile.parse("checks:\n  - isbn13.filled >= 90%\n  - errors == 0: warn\n", path: "checks.yaml").evaluate(report)
        try await ReportHistory.save(report, in: store, at: Date(timeIntervalSince1970: 1_800_000_000))
        try await ReportHistory.compare(&report, in: store)
        let page = ReportFixture.temporaryPath("links", extension: "html")
        try Data(ReportRenderer.html(report).utf8).write(to: URL(fileURLWithPath: page))
        let dom = try runChromium(["--dump-dom", "file://" + page])
        #expect(dom.status == 0)
        let links = Set(dom.output.matches(of: /href="#([^"]+)"/).map { String($0.output.1) })
        let ids = Set(dom.output.matches(of: /\sid="([^"]+)"/).map { String($0.output.1) })
        // Tiles, figures, completeness rows: many links, each to a section that exists.
        #expect(links.count >= 10)
        #expect(links.subtracting(ids).isEmpty, "links without a target: \(links.subtracting(ids).sorted())")
        for section in ["code-duplicate.book", "code-row.rejected", "code-lookup.failed", "missing-isbn", "missing-author", "checks"] {
            #expect(ids.contains(section), "\(section)")
        }
        #expect(!dom.output.lowercased().contains("<script"))
        #expect(dom.output.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        // The override character is serialised inside a <bdi> that closes after it.
        for range in dom.output.ranges(of: "\u{202E}") {
            let before = dom.output[..<range.lowerBound]
            let open = try #require(before.range(of: "<bdi>", options: .backwards))
            #expect(before.range(of: "</bdi>", options: .backwards).map { $0.lowerBound < open.lowerBound } ?? true)
        }
        #expect(dom.output.contains("bookpipe list missing:isbn"))
    }

    /// Pages of a PDF (its page objects).
    static func pageCount(_ pdf: Data) -> Int {
        let text = String(decoding: pdf, as: UTF8.self)
        return text.ranges(of: /\/Type\s*\/Page[^s]/).count
    }

    @Test("Printed, the collapsed findings come out in full: as many pages as with every group opened")
    func printsCollapsedFindings() async throws {
        let store = try LibraryStore(path: ReportFixture.temporaryPath())
        // Enough findings for their tables to fill pages of their own.
        let finding = Finding(code: "date.unparseable", severity: .warning, field: "Date Read",
                              message: "\"31/31/2020\" is not a date in any order of day, month and year")
        try store.insert((1...160).map { ReportFixture.record($0, title: "Book \($0)", findings: [finding]) })
        let html = try await ReportRenderer.html(try QualityReportBuilder(store: store).build())
        #expect(html.contains("<details>"))
        func pages(_ page: String) throws -> Int {
            let source = ReportFixture.temporaryPath("print", extension: "html")
            let pdf = ReportFixture.temporaryPath("print", extension: "pdf")
            try Data(page.utf8).write(to: URL(fileURLWithPath: source))
            let printed = try runChromium(["--print-to-pdf=" + pdf, "--no-pdf-header-footer", "file://" + source])
            #expect(printed.status == 0)
            return Self.pageCount(try Data(contentsOf: URL(fileURLWithPath: pdf)))
        }
        let opened = try pages(html.replacingOccurrences(of: "<details>", with: "<details open>"))
        #expect(opened > 2)
        #expect(try pages(html) == opened)
    }
}
