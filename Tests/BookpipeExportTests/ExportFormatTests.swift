import BookpipeExport
import Foundation
import Testing

@Suite struct ExportFormatTests {
    @Test("wingtip's default file is the app's dated name, by the UTC day; the others go to standard output")
    func defaultFileName() {
        // 2024-02-29 23:30 UTC, which is already 1 March east of Greenwich.
        let date = Date(timeIntervalSince1970: 1_709_249_400)
        #expect(ExportFormat.wingtip.defaultFileName(on: date) == "wingtip_library_2024-02-29.csv")
        #expect(ExportFormat.json.defaultFileName(on: date) == nil)
        #expect(ExportFormat.jsonl.defaultFileName(on: date) == nil)
        #expect(ExportFormat.csv.defaultFileName(on: date) == nil)
    }

    @Test("The formats' names are the ones the command line and the documentation use")
    func names() {
        #expect(ExportFormat.allCases.map(\.rawValue) == ["json", "jsonl", "csv", "wingtip"])
    }
}
