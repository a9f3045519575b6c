import Testing
@testable import BookpipeCore

@Suite struct BookRecordTests {
    @Test("A record's id is the file hash and the data row, so reruns find it again")
    func stableID() {
        let origin = RecordOrigin(file: "a.csv", fileHash: "abcd", row: 7, line: 9)
        #expect(BookRecord(origin: origin).id == "abcd:7")
    }

    @Test("Adding the same finding twice keeps one")
    func findingsDeduplicated() {
        var record = BookRecord(origin: RecordOrigin(file: "a.csv", fileHash: "x", row: 1, line: 2))
        let finding = Finding(code: "isbn.invalid", severity: .warning, field: "ISBN", message: "bad")
        record.addFinding(finding)
        record.addFinding(finding)
        #expect(record.findings.count == 1)
    }

    @Test("A box with NaN, zero size or lying outside the photo is invalid", arguments: [
        (BoundingBox(x: .nan, y: 0, width: 0.1, height: 0.1), false),
        (BoundingBox(x: 0, y: 0, width: 0, height: 0.1), false),
        (BoundingBox(x: 1.2, y: 0, width: 0.1, height: 0.1), false),
        (BoundingBox(x: 0.1, y: 0.2, width: 0.3, height: 0.4), true),
    ])
    func boxValidity(box: BoundingBox, isValid: Bool) {
        #expect(box.isValid == isValid)
    }
}
