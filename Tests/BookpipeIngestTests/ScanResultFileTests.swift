import BookpipeCore
import Foundation
import Testing

@testable import BookpipeIngest

/// Paths of the shipped samples.
private enum Samples {
    static func shelfScan(_ name: String) -> String {
        TestPaths.testsDirectory + "/../../samples/shelf-scan/" + name
    }
}

/// Reads a scan result written into a temporary folder (with an optional photo beside it).
private func readScan(_ json: String, name: String = "scan.json", in directory: TemporaryDirectory,
                      options: ScanResultFile.Options = .init()) throws -> ScanResultFile {
    let path = try directory.write(name, json)
    return try ScanResultFile(path: path, options: options)
}

/// The error reading `json` throws, or nil.
private func scanError(_ json: String, in directory: TemporaryDirectory) throws -> ScanResultError? {
    let path = try directory.write("scan.json", json)
    do {
        _ = try ScanResultFile(path: path)
        return nil
    } catch {
        return error
    }
}

private func codes(_ record: BookRecord) -> [String] { record.findings.map(\.code) }

@Suite struct ScanResultFileTests {
    // MARK: Shapes

    @Test("The sample scan (one photo's object) gives 12 records with rows, indexes, lines and the sample's confidences")
    func sampleScan() throws {
        let path = Samples.shelfScan("scan.json")
        let scan = try ScanResultFile(path: path)
        #expect(scan.shape == .photoObject)
        #expect(scan.records.count == 12)
        #expect(scan.rejected.isEmpty)
        #expect(scan.rowCount == 12)
        #expect(scan.records.map(\.origin.row) == Array(1...12))
        #expect(scan.records.map { $0.scan?.index } == Array(1...12))
        #expect(scan.records.map(\.origin.format) == Array(repeating: "scan", count: 12))
        #expect(scan.records.map(\.origin.scan) == Array(repeating: "scan.json", count: 12))
        #expect(scan.records[0].title == "The Hobbit")
        #expect(scan.records[0].authors == ["J.R.R. Tolkien"])
        #expect(scan.records[0].origin.line == 4)
        #expect(scan.records[1].origin.line == 15)
        #expect(scan.records.map { $0.scan?.confidence } == [0.97, 0.93, 0.58, 0.6, 0.88, nil, 0.91, 0.42, 0.86, 0.79, 0.31, 0.74])
        #expect(scan.records[1].scan?.boundingBox == BoundingBox(x: 0.088, y: 0.11, width: 0.058, height: 0.83))
        // Slaughterhouse-Five: y 1.15 is kept and flagged; The Left Hand of Darkness: no box.
        #expect(scan.records[8].scan?.boundingBox == BoundingBox(x: 0.527, y: 1.15, width: 0.055, height: 0.8))
        #expect(codes(scan.records[8]).contains(ScanFindingCode.boxInvalid))
        #expect(scan.records[10].scan?.boundingBox == nil)
        #expect(codes(scan.records[10]).contains(ScanFindingCode.boxMissing))
        let flagged = scan.records.filter { codes($0).contains { $0.hasPrefix("scan.box") } }.map(\.title)
        #expect(flagged == ["SLAUGHTERHOUSE-FIVE", "The Left Hand of Darkness"])
        #expect(scan.records.allSatisfy { !codes($0).contains(ScanFindingCode.confidenceInvalid) })
    }

    @Test("Record ids are the file's content fingerprint and the row, the same wherever the file lives")
    func stableIDs() throws {
        let directory = try TemporaryDirectory()
        let json = #"[{"title": "Dune", "confidence": 0.9}, {"title": "Emma"}]"#
        let first = try readScan(json, name: "a.json", in: directory)
        let second = try readScan(json, name: "b.json", in: directory)
        var fingerprint = ContentFingerprint()
        Array(json.utf8).withUnsafeBytes { fingerprint.update($0) }
        let hash = fingerprint.finalize()
        #expect(first.fileHash == hash)
        #expect(first.records.map(\.id) == ["\(hash):1", "\(hash):2"])
        #expect(second.records.map(\.id) == first.records.map(\.id))
        let changed = try readScan(json.replacingOccurrences(of: "0.9", with: "0.8"), name: "c.json", in: directory)
        #expect(changed.records.map(\.id) != first.records.map(\.id))
        #expect(first.input.format == "scan")
        #expect(first.input.fileHash == hash)
        #expect(first.input.estimatedRows == 2)
    }

    @Test("A bare list takes its photo from --photo, relative to the current directory, and names the scan after the file")
    func bareListWithPhoto() throws {
        let directory = try TemporaryDirectory()
        let photo = try directory.write("shelf.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        let scan = try readScan("""
            [
              {"title": "DUNE", "author": "FRANK HERBERT", "confidence": 0.93,
               "boundingBox": {"x": 0.088, "y": 0.11, "width": 0.058, "height": 0.83}},
              {"title": "Emma", "author": null, "confidence": 0.6}
            ]
            """, name: "bare.json", in: directory, options: .init(photo: photo))
        #expect(scan.shape == .detectionList)
        #expect(scan.scans.map(\.name) == ["bare.json"])
        let realPhoto = try #require(ScanPhotoPath.realPath(photo))
        #expect(scan.scans.first?.photo?.path == realPhoto)
        #expect(scan.records.map { $0.scan?.photoPath } == [realPhoto, realPhoto])
        #expect(scan.records.map(\.authors) == [["FRANK HERBERT"], []])
        #expect(scan.records.map(\.origin.line) == [2, 4])
        #expect(scan.records[0].origin.rawFields == [
            #"{"title": "DUNE", "author": "FRANK HERBERT", "confidence": 0.93,"# + "\n"
                + #"   "boundingBox": {"x": 0.088, "y": 0.11, "width": 0.058, "height": 0.83}}"#,
        ])
        #expect(scan.records[1].origin.rawFields == [#"{"title": "Emma", "author": null, "confidence": 0.6}"#])
        #expect(scan.records.allSatisfy { !codes($0).contains { $0.hasPrefix("scan.photo") } })
    }

    @Test("A bare list without --photo is imported for text-only review, each record saying so")
    func bareListWithoutPhoto() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan(#"[{"title": "Dune"}]"#, in: directory)
        #expect(scan.records.first?.scan?.photoPath == nil)
        let finding = try #require(scan.records.first?.findings.first { $0.code == ScanFindingCode.photoMissing })
        #expect(finding.message == "\(directory.path)/scan.json: scan \"scan.json\" names no photo, so review is text only. "
            + "Give the photo with --photo, or as \"originalImagePath\" in the scan.")
    }

    @Test("An envelope with two scans numbers rows across the file and indexes within each scan")
    func envelopeWithTwoScans() throws {
        let directory = try TemporaryDirectory()
        _ = try directory.write("left.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        try FileManager.default.createDirectory(atPath: directory.path + "/photos", withIntermediateDirectories: true)
        _ = try directory.write("photos/right.jpg", [0xFF, 0xD8, 0xFF, 0xD9])
        let scan = try readScan("""
            {"format": "bookshelf-scan", "version": 1, "scans": [
              {"scanId": "left", "originalImagePath": "left.jpg", "capturedAt": "2025-03-01T10:00:00Z",
               "imageWidth": 4032, "imageHeight": 3024,
               "books": [{"title": "Dune", "confidence": 0.9}, {"title": "Emma", "confidence": 0.5}]},
              {"scanId": "right", "originalImagePath": "photos/right.jpg",
               "books": [{"title": "It"}, {"title": "Beloved"}, {"title": "Piranesi"}]}
            ]}
            """, in: directory)
        #expect(scan.shape == .envelope)
        #expect(scan.shapeDescription == "bookshelf scan envelope (2 scans)")
        #expect(scan.records.map(\.title) == ["Dune", "Emma", "It", "Beloved", "Piranesi"])
        #expect(scan.records.map(\.origin.row) == [1, 2, 3, 4, 5])
        #expect(scan.records.map { $0.scan?.index } == [1, 2, 1, 2, 3])
        #expect(scan.records.map(\.origin.scan) == ["left", "left", "right", "right", "right"])
        #expect(scan.scans.map(\.name) == ["left", "right"])
        #expect(scan.scans.map(\.rows) == [1..<3, 3..<6])
        #expect(scan.scans[0].capturedAt == "2025-03-01T10:00:00Z")
        #expect(scan.scans[0].imageWidth == 4032)
        #expect(scan.scans[0].imageHeight == 3024)
        #expect(scan.scans[1].imageWidth == nil)
        let real = try #require(ScanPhotoPath.realPath(directory.path))
        #expect(scan.records.map { $0.scan?.photoPath } == [real + "/left.jpg", real + "/left.jpg",
                                                            real + "/photos/right.jpg", real + "/photos/right.jpg",
                                                            real + "/photos/right.jpg"])
    }

    @Test("Boxes as [x, y, width, height] and with numeric strings read the same as numbers")
    func boxShapes() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            [{"title": "A", "boundingBox": {"x": 0.25, "y": 0.5, "width": 0.125, "height": 0.25}},
             {"title": "B", "boundingBox": [0.25, 0.5, 0.125, 0.25]},
             {"title": "C", "boundingBox": {"x": "0.25", "y": " 0.5 ", "width": "1.25e-1", "height": "0.25"}},
             {"title": "D", "boundingBox": ["0.25", 0.5, "0.125", 0.25]},
             {"title": "E", "box": [0.25, 0.5, 0.125, 0.25]}]
            """, in: directory)
        let expected = BoundingBox(x: 0.25, y: 0.5, width: 0.125, height: 0.25)
        #expect(scan.records.map { $0.scan?.boundingBox } == Array(repeating: expected, count: 5))
        #expect(scan.records.allSatisfy { !codes($0).contains { $0.hasPrefix("scan.box") } })
    }

    @Test("Unreadable boxes are flagged with what is wrong and the record is kept without a box", arguments: [
        (#"[0.1, 0.2, 0.3]"#, "the bounding box is a list of 3 values, not [x, y, width, height]"),
        (#"{"x": 0.1, "y": 0.2, "width": 0.3}"#, "the bounding box has no \"height\""),
        (#"{"x": "left", "y": 0.2, "width": 0.3, "height": 0.4}"#, "the bounding box \"x\" is the text \"left\", not a number"),
        (#"{"x": "nan", "y": 0.2, "width": 0.3, "height": 0.4}"#, "the bounding box \"x\" is the text \"nan\", not a number"),
        (#"{"x": "0x1p-2", "y": 0.2, "width": 0.3, "height": 0.4}"#, "the bounding box \"x\" is the text \"0x1p-2\", not a number"),
        (#"{"x": NaN, "y": 0.2, "width": 0.3, "height": 0.4}"#, "the bounding box \"x\" is the literal NaN, not a number"),
        (#"[0.1, Infinity, 0.3, 0.4]"#, "the bounding box y is the literal Infinity, not a number"),
        (#"[0.1, 0.2, true, 0.4]"#, "the bounding box width is a boolean, not a number"),
        (#""0.1,0.2,0.3,0.4""#, "the bounding box is a string, not {\"x\", \"y\", \"width\", \"height\"} or [x, y, width, height]"),
    ])
    func unreadableBoxes(box: String, problem: String) throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan(#"[{"title": "Dune", "confidence": 0.9, "boundingBox": \#(box)}]"#, in: directory)
        let record = try #require(scan.records.first)
        #expect(record.scan?.boundingBox == nil)
        #expect(record.scan?.confidence == 0.9)
        let finding = try #require(record.findings.first { $0.code == ScanFindingCode.boxInvalid })
        #expect(finding.message == "detection 1 of scan \"scan.json\": \(problem); review shows the whole photo.")
    }

    @Test("A box with no size or outside the photo is kept and flagged; a null box counts as missing")
    func outOfRangeBoxes() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            [{"title": "A", "boundingBox": [0.1, 0.2, 0, 0.5]},
             {"title": "B", "boundingBox": [1.5, 0.2, 0.1, 0.5]},
             {"title": "C", "boundingBox": null}]
            """, in: directory)
        #expect(scan.records[0].scan?.boundingBox == BoundingBox(x: 0.1, y: 0.2, width: 0, height: 0.5))
        #expect(scan.records[1].scan?.boundingBox == BoundingBox(x: 1.5, y: 0.2, width: 0.1, height: 0.5))
        #expect(scan.records[0].findings.first { $0.code == ScanFindingCode.boxInvalid }?.message
            == "detection 1 of scan \"scan.json\": the bounding box (x 0.1, y 0.2, width 0.0, height 0.5) has no size "
            + "or lies outside the photo (coordinates are 0…1 of the upright photo); it is kept, and review shows the whole photo.")
        #expect(codes(scan.records[1]).contains(ScanFindingCode.boxInvalid))
        #expect(scan.records[2].scan?.boundingBox == nil)
        #expect(codes(scan.records[2]).contains(ScanFindingCode.boxMissing))
    }

    // MARK: Confidence

    @Test("A confidence that is not a number in 0…1 is reported by what it was, never clamped", arguments: [
        ("\"0.9\"", "is the text \"0.9\", not a number"),
        ("1.7", "is 1.7, outside 0…1"),
        ("-0.2", "is -0.2, outside 0…1"),
        ("NaN", "is the literal NaN, not a number in 0…1"),
        ("Infinity", "is the literal Infinity, not a number in 0…1"),
        ("-Infinity", "is the literal -Infinity, not a number in 0…1"),
        ("1e999", "is 1e999, too large to be a number in 0…1"),
        ("true", "is a boolean, not a number in 0…1"),
        ("[0.9]", "is a list, not a number in 0…1"),
    ])
    func invalidConfidence(value: String, problem: String) throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan(#"[{"title": "Dune", "confidence": \#(value)}, {"title": "Emma", "confidence": 0.95}]"#,
                                in: directory)
        #expect(scan.records.count == 2)
        #expect(scan.records[0].scan?.confidence == nil)
        let finding = try #require(scan.records[0].findings.first { $0.code == ScanFindingCode.confidenceInvalid })
        #expect(finding.severity == .error)
        #expect(finding.message == "detection 1 of scan \"scan.json\": the confidence \(problem). "
            + "It is not used (never clamped); the detection goes to review.")
        #expect(scan.records[1].scan?.confidence == 0.95)
        #expect(!codes(scan.records[1]).contains(ScanFindingCode.confidenceInvalid))
    }

    @Test("Routing the records of a file: below 0.60 and invalid need review; 0.60, higher and missing are verified")
    func routingTable() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            [{"title": "a", "confidence": 0.5999}, {"title": "b", "confidence": 0.60}, {"title": "c"},
             {"title": "d", "confidence": null}, {"title": "e", "confidence": 1.7}, {"title": "f", "confidence": -0.2},
             {"title": "g", "confidence": NaN}, {"title": "h", "confidence": "0.9"}, {"title": "i", "confidence": 1},
             {"title": "j", "confidence": 0}]
            """, in: directory)
        var records = scan.records
        for index in records.indices { ReviewRouting.standard.route(&records[index]) }
        #expect(records.map(\.reviewStatus) == [.needsReview, .verified, .verified, .verified, .needsReview, .needsReview,
                                                .needsReview, .needsReview, .verified, .needsReview])
        #expect(scan.records.allSatisfy { $0.reviewStatus == .verified })
    }

    // MARK: Detections

    @Test("Detections that are not objects or have no title are rejected with their row; the rows after keep their numbers")
    func rejectedDetections() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", """
            [
              "DUNE",
              {"author": "Jane Austen"},
              {"title": "   "},
              {"title": {"text": "It"}},
              {"title": "Beloved"}
            ]
            """)
        let scan = try ScanResultFile(path: path)
        #expect(scan.records.map(\.title) == ["Beloved"])
        #expect(scan.records.map(\.origin.row) == [5])
        #expect(scan.records.map { $0.scan?.index } == [5])
        #expect(scan.rowCount == 5)
        #expect(scan.rejected.map(\.row) == [1, 2, 3, 4])
        #expect(scan.rejected.map(\.location) == ["\(path):2:3", "\(path):3:3", "\(path):4:3", "\(path):5:3"])
        #expect(scan.rejected.map(\.reason) == [
            "detection 1 of scan \"scan.json\" is a string, not an object with a \"title\"; skipped",
            "detection 2 of scan \"scan.json\" has no title; skipped. A detection needs the spine's \"title\" as text",
            "detection 3 of scan \"scan.json\" has no title; skipped. A detection needs the spine's \"title\" as text",
            "detection 4 of scan \"scan.json\": the title is an object, not text; skipped",
        ])
        #expect(scan.rejected.map(\.rawText) == ["\"DUNE\"", #"{"author": "Jane Austen"}"#, #"{"title": "   "}"#,
                                                 #"{"title": {"text": "It"}}"#])
        #expect(scan.rejected.allSatisfy { $0.fileHash == scan.fileHash })
    }

    @Test("A numeric title is read as its text with a finding; authors may be null, a list, or wrongly typed")
    func titlesAndAuthors() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            [{"title": 1984, "author": "George Orwell"},
             {"title": "Good Omens", "author": ["Neil Gaiman", "Terry Pratchett", 7]},
             {"title": "Emma", "authors": ["Jane Austen"]},
             {"title": "It", "author": {"name": "Stephen King"}},
             {"title": "Dune", "author": ""}]
            """, in: directory)
        #expect(scan.records.map(\.title) == ["1984", "Good Omens", "Emma", "It", "Dune"])
        #expect(scan.records.map(\.authors) == [["George Orwell"], ["Neil Gaiman", "Terry Pratchett"], ["Jane Austen"], [], []])
        #expect(codes(scan.records[0]).contains(ScanFindingCode.titleNotText))
        #expect(scan.records[1].findings.first { $0.code == ScanFindingCode.authorInvalid }?.message
            == "detection 2 of scan \"scan.json\": an author in \"author\" is a number, not text; it is left out.")
        #expect(scan.records[3].findings.first { $0.code == ScanFindingCode.authorInvalid }?.message
            == "detection 4 of scan \"scan.json\": \"author\" is an object, not text; the record has no author.")
        #expect(!codes(scan.records[4]).contains(ScanFindingCode.authorInvalid))
    }

    @Test("A detection's isbn is kept as written for normalisation to check: text, a number as its digits (noted), never made up")
    func isbns() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            [{"title": "Project Hail Mary", "isbn": "9780593135204"},
             {"title": "Dune", "isbn": "978-0-00-000000-1"},
             {"title": "Emma", "isbn": 9780141439587},
             {"title": "It", "isbn": null},
             {"title": "Beloved", "isbn": "  "},
             {"title": "Sula", "isbn": ["9780452263499"]},
             {"title": "Jazz"}]
            """, in: directory)
        var records = scan.records
        for index in records.indices { Normalizer.normalize(&records[index], currentYear: 2026) }
        #expect(records.map(\.rawISBNs) == [["9780593135204"], ["978-0-00-000000-1"], ["9780141439587"], [], [], [], []])
        #expect(records.map { $0.normalized?.isbn13 } == ["9780593135204", nil, "9780141439587", nil, nil, nil, nil])
        // The invalid one: a finding from normalisation, and no ISBN.
        #expect(records[1].findings.contains { $0.field == "isbn" && $0.severity == .warning }, "\(records[1].findings)")
        #expect(records[2].findings.first { $0.code == ScanFindingCode.isbnNotText }?.message
            == "detection 3 of scan \"scan.json\": the ISBN is the number 9780141439587; it is read as the text \"9780141439587\".")
        #expect(records[5].findings.first { $0.code == ScanFindingCode.isbnNotText }?.message
            == "detection 6 of scan \"scan.json\": \"isbn\" is a list, not text; the record has no ISBN.")
        for index in [0, 3, 4, 6] { #expect(!codes(records[index]).contains { $0.hasPrefix("isbn") || $0 == ScanFindingCode.isbnNotText }) }
    }

    @Test("Upper-case spine titles keep their text and normalise to the same key as the catalogue's title")
    func upperCaseTitles() throws {
        let scan = try ScanResultFile(path: Samples.shelfScan("scan.json"))
        let station = try #require(scan.records.first { $0.title == "STATION ELEVEN" })
        #expect(TitleNormalizer.key(station.title) == TitleNormalizer.key("Station Eleven"))
    }

    @Test("A one-line file gives every detection line 1 and its own column")
    func minifiedFile() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", #"[{"title":"Dune"},7,{"title":"Emma"}]"#)
        let scan = try ScanResultFile(path: path)
        #expect(scan.records.map(\.origin.line) == [1, 1])
        #expect(scan.rejected.map(\.location) == ["\(path):1:19"])
    }

    @Test("A UTF-8 byte-order mark is skipped and columns count characters, not bytes")
    func byteOrderMarkAndColumns() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", [0xEF, 0xBB, 0xBF] + Array(#"[{"title": "Café"}, "é", 3]"#.utf8))
        let scan = try ScanResultFile(path: path)
        #expect(scan.records.map(\.title) == ["Café"])
        #expect(scan.rejected.map(\.location) == ["\(path):1:21", "\(path):1:26"])
    }

    // MARK: Bad files

    @Test("A truncated file is an error with line and column naming the object left open; nothing is imported")
    func truncatedFile() throws {
        let directory = try TemporaryDirectory()
        let error = try scanError("[\n  {\"title\": \"Dune\", \"confidence\": 0.9},\n  {\"title\": \"Emma\",\n   \"confidence\": 0.6", in: directory)
        #expect(error == .invalidJSON(file: directory.path + "/scan.json", line: 4, column: 21,
                                      reason: "the file ends inside the object that starts at line 3, column 3; it looks cut off"))
        #expect(error?.description == "\(directory.path)/scan.json:4:21: not valid JSON: the file ends inside the object "
            + "that starts at line 3, column 3; it looks cut off. Nothing was imported from this file. "
            + "Fix the file (or save the scan result again) and run the import again.")
    }

    @Test("Cut-off files are errors wherever they stop", arguments: [
        (#"[{"title": "Du"#, 1, 15, "the file ends inside the string that starts at line 1, column 12; it looks cut off"),
        (#"[{"title": "Dune", "confidence": 0."#, 1, 36, "the file ends inside the object that starts at line 1, column 2; it looks cut off"),
        (#"[{"title": "Dune", "confidence": tr"#, 1, 36, "the file ends inside the object that starts at line 1, column 2; it looks cut off"),
        (#"[{"title": "Dune", "confidence": Na"#, 1, 36, "the file ends inside the object that starts at line 1, column 2; it looks cut off"),
        (#"[{"title": "Dune"}"#, 1, 19, "the file ends inside the list that starts at line 1, column 1; it looks cut off"),
        (#"{"format": "bookshelf-scan", "scans": [{"scanId": "a", "books": [{"#, 1, 67,
         "the file ends inside the object that starts at line 1, column 66; it looks cut off"),
        (#"[{"title": "Dune\u00"#, 1, 21, "the file ends inside the string that starts at line 1, column 12; it looks cut off"),
    ])
    func cutOffFiles(json: String, line: Int, column: Int, reason: String) throws {
        let directory = try TemporaryDirectory()
        #expect(try scanError(json, in: directory)
            == .invalidJSON(file: directory.path + "/scan.json", line: line, column: column, reason: reason))
    }

    @Test("Syntax errors point at the character and say what was expected", arguments: [
        ("[{\"title\": \"Dune\"}\n {\"title\": \"Emma\"}]", 2, 2, "expected ',' or ']' after a list element, found '{'"),
        ("[{\"title\" \"Dune\"}]", 1, 11, "expected ':' after the member name \"title\", found '\"'"),
        ("[{\"title\": \"Dune\",}]", 1, 19, "expected a member name in double quotes, found '}'"),
        ("[{'title': 'Dune'}]", 1, 3, "expected a member name in double quotes, found '''"),
        ("[{\"title\": nan}]", 1, 12, "unexpected 'nan': a JSON value is an object, a list, a string in double quotes, "
            + "a number, true, false or null"),
        ("[{\"confidence\": 01}]", 1, 17, "invalid number '01'"),
        ("[{\"confidence\": .5}]", 1, 17, "unexpected '.5': a JSON value is an object, a list, a string in double quotes, "
            + "a number, true, false or null"),
        ("[{\"title\": \"a\nb\"}]", 1, 14, "a line break inside a string (write it as an escape such as \\n, or close the string's quote)"),
        ("[{\"title\": \"\\x\"}]", 1, 13, "invalid escape '\\x' in a string"),
        ("[] []", 1, 4, "unexpected '[' after the end of the JSON value"),
    ])
    func syntaxErrors(json: String, line: Int, column: Int, reason: String) throws {
        let directory = try TemporaryDirectory()
        #expect(try scanError(json, in: directory)
            == .invalidJSON(file: directory.path + "/scan.json", line: line, column: column, reason: reason))
    }

    @Test("Files that hold no scan result are errors that say what they hold")
    func notScanResults() throws {
        let directory = try TemporaryDirectory()
        let file = directory.path + "/scan.json"
        #expect(try scanError("", in: directory) == .emptyFile(file: file))
        #expect(try scanError(" \n\t\n", in: directory) == .emptyFile(file: file))
        #expect(try scanError("42", in: directory) == .unknownShape(file: file, found: "a number"))
        #expect(try scanError(#"{"title": "Dune"}"#, in: directory)
            == .unknownShape(file: file, found: "an object with the keys \"title\""))
        #expect(try scanError(#"{"format": "csv", "scans": []}"#, in: directory)
            == .unsupportedEnvelope(file: file, line: 1, column: 12, reason: "the format is \"csv\", not \"bookshelf-scan\""))
        #expect(try scanError(#"{"format": "bookshelf-scan", "version": 2, "scans": []}"#, in: directory)
            == .unsupportedEnvelope(file: file, line: 1, column: 41,
                                    reason: "version 2 is not one this bookpipe reads (it reads version 1)"))
        #expect(try scanError(#"{"format": "bookshelf-scan", "version": 1, "scans": {"scanId": "a"}}"#, in: directory)
            == .unsupportedEnvelope(file: file, line: 1, column: 53, reason: "\"scans\" is an object, not a list of scans"))
        #expect(try scanError(#"{"photo": "a.jpg", "detections": {}}"#, in: directory)
            == .unsupportedEnvelope(file: file, line: 1, column: 34, reason: "\"detections\" is an object, not a list of detections"))
        #expect(try scanError(#"{"format": "bookshelf-scan", "version": 1, "scans": []}"#, in: directory) == nil)
    }

    @Test("Bytes that are not UTF-8 are an error at their line and column")
    func notUTF8() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", Array("[\n {\"title\": \"Caf".utf8) + [0xE9] + Array("\"}]".utf8))
        #expect(throws: ScanResultError.notUTF8(file: path, line: 2, column: 16)) { try ScanResultFile(path: path) }
    }

    @Test("A missing file, a folder and a file over the size limit are errors naming the file")
    func unreadableFiles() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: ScanResultError.cannotOpen(file: directory.path + "/none.json", reason: "No such file or directory")) {
            try ScanResultFile(path: directory.path + "/none.json")
        }
        #expect(throws: ScanResultError.cannotOpen(file: directory.path, reason: "it is a directory")) {
            try ScanResultFile(path: directory.path)
        }
        let path = try directory.write("big.json", "[" + String(repeating: " ", count: 200) + "]")
        #expect(throws: ScanResultError.tooLarge(file: path, size: 202, limit: 100)) {
            try ScanResultFile(path: path, options: .init(maxFileSize: 100))
        }
    }

    @Test("Deep nesting is an error, not a stack overflow")
    func deepNesting() throws {
        let directory = try TemporaryDirectory()
        let error = try scanError(String(repeating: "[", count: 100_000), in: directory)
        #expect(error == .invalidJSON(file: directory.path + "/scan.json", line: 1, column: 201,
                                      reason: "values are nested more than 200 levels deep"))
    }

    // MARK: Bad scans in an envelope

    @Test("A scan with a numeric scanId, books as an object or no books is reported; the next scans still import")
    func wrongTypesInScans() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", """
            {"format": "bookshelf-scan", "version": 1, "scans": [
              {"scanId": 17, "books": [{"title": "Lost 1"}]},
              {"scanId": "b", "books": {"title": "Lost 2"}},
              "c",
              {"scanId": "d", "originalImagePath": 5, "books": []},
              {"books": [{"title": "Lost 3"}]},
              {"scanId": "e", "books": [{"title": "Kept", "confidence": 0.9}]}
            ]}
            """)
        let scan = try ScanResultFile(path: path)
        #expect(scan.records.map(\.title) == ["Kept"])
        #expect(scan.records.map(\.origin.row) == [1])
        #expect(scan.records.map(\.origin.scan) == ["e"])
        #expect(scan.scans.map(\.name) == ["e"])
        #expect(scan.rejected.map(\.row) == [nil, nil, nil, nil, nil])
        #expect(scan.rejected.map(\.location) == ["\(path):2:3", "\(path):3:3", "\(path):4:3", "\(path):5:3", "\(path):6:3"])
        #expect(scan.rejected.map(\.reason) == [
            "scan 1 (line 2, column 3): \"scanId\" is a number (17), not text; skipped, the other scans are imported. "
                + "Write the scan id in double quotes",
            "scan \"b\" (scan 2, line 3, column 3): \"books\" is an object, not a list of detections; skipped, "
                + "the other scans are imported. Write the detections as a list: \"books\": [{…}, {…}]",
            "scan 3 (line 4, column 3) is a string, not an object with \"scanId\" and \"books\"; skipped, the other scans are imported",
            "scan \"d\" (scan 4, line 5, column 3): \"originalImagePath\" is a number, not a path; skipped, the other scans "
                + "are imported. Write the photo's path in double quotes, relative to the scan file's folder",
            "scan 5 (line 6, column 3) has no \"scanId\"; skipped, the other scans are imported. Give each scan a text \"scanId\"",
        ])
        #expect(scan.rejected[0].rawText == #"{"scanId": 17, "books": [{"title": "Lost 1"}]}"#)
    }

    @Test("NaN and Infinity anywhere are reported by name on the detection; the good detections of the file import")
    func nonFiniteLiterals() throws {
        let directory = try TemporaryDirectory()
        let scan = try readScan("""
            {"format": "bookshelf-scan", "version": 1, "scans": [
              {"scanId": "a", "imageWidth": Infinity, "imageHeight": "3024",
               "books": [{"title": "Dune", "confidence": NaN, "boundingBox": [0.1, 0.1, 0.1, 0.1]},
                         {"title": "Emma", "confidence": 0.8, "boundingBox": [0.1, -Infinity, 0.1, 0.1]},
                         {"title": "It", "confidence": 0.7}]}
            ]}
            """, in: directory)
        #expect(scan.records.map(\.title) == ["Dune", "Emma", "It"])
        #expect(scan.records[0].findings.first { $0.code == ScanFindingCode.confidenceInvalid }?.message
            == "detection 1 of scan \"a\": the confidence is the literal NaN, not a number in 0…1. "
            + "It is not used (never clamped); the detection goes to review.")
        #expect(scan.records[1].findings.first { $0.code == ScanFindingCode.boxInvalid }?.message
            == "detection 2 of scan \"a\": the bounding box y is the literal -Infinity, not a number; review shows the whole photo.")
        #expect(scan.records[1].scan?.confidence == 0.8)
        #expect(scan.records[2].findings.allSatisfy { $0.code == ScanFindingCode.photoMissing || $0.code == ScanFindingCode.boxMissing })
        #expect(scan.scans[0].imageWidth == nil)
        #expect(scan.scans[0].imageHeight == 3024)
        #expect(scan.scans[0].notes == ["\"imageWidth\" is the literal Infinity, not a whole number of pixels; ignored"])
    }

    @Test("A refused photo keeps the scan's detections for text-only review, each with the refusal naming the scan")
    func refusedPhotoKeepsDetections() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("scan.json", """
            {"format": "bookshelf-scan", "version": 1, "scans": [
              {"scanId": "escape", "originalImagePath": "../outside.jpg", "books": [{"title": "Dune"}]},
              {"scanId": "gone", "originalImagePath": "missing.jpg", "books": [{"title": "Emma"}]}
            ]}
            """)
        let scan = try ScanResultFile(path: path)
        #expect(scan.records.map(\.title) == ["Dune", "Emma"])
        #expect(scan.records.map { $0.scan?.photoPath } == [nil, nil])
        #expect(scan.scans.map { $0.photoError?.reason } == [.leavesFolder(windowsSeparators: false), .notFound])
        let finding = try #require(scan.records[0].findings.first { $0.code == ScanFindingCode.photoRefused })
        #expect(finding.message == "\(path): scan \"escape\": photo \"../outside.jpg\" refused: '..' leads out of the scan folder. "
            + "Put the photo in the scan's folder (\(directory.path)) and name it relative to that folder. "
            + "The detection is kept for text-only review.")
    }

    // MARK: The parser against Foundation

    @Test("The positioned parser reads valid documents exactly as JSONSerialization does", arguments: [
        #"{"a": [1, -2.5, 3e2, 0, -0.0, 1E-3, 12345678901234567890], "b": {"c": null, "d": true, "e": false}}"#,
        #"["\u00e9\u0041\ud83d\ude00\n\t\"\\\/", "plain", "", "é😀"]"#,
        #"  [ { } , [ ] , "x" ]  "#,
        #"{"dup": 1, "nested": [[[["deep"]]]], "num": 0.1, "big": 1.7976931348623157e308}"#,
    ])
    func agreesWithFoundation(json: String) throws {
        let bytes = Array(json.utf8)
        var parser = PositionedJSONParser(bytes: bytes, start: 0) { "\($0)" }
        let node = try parser.parseDocument()
        let foundation = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        #expect(Self.plain(node) == Self.plain(foundation))
    }

    /// A comparable text form of a parsed value (numbers as doubles).
    static func plain(_ node: JSONNode) -> String {
        switch node.value {
        case .object(let members): "{" + members.map { "\($0.key.debugDescription):\(plain($0.node))" }.sorted().joined(separator: ",") + "}"
        case .array(let elements): "[" + elements.map(plain).joined(separator: ",") + "]"
        case .string(let text): text.debugDescription
        case .number(let value, _): "\(value)"
        case .nonFinite(let literal): literal
        case .bool(let value): "\(value)"
        case .null: "null"
        }
    }

    static func plain(_ value: Any) -> String {
        switch value {
        case let dictionary as [String: Any]:
            "{" + dictionary.map { "\($0.key.debugDescription):\(plain($0.value))" }.sorted().joined(separator: ",") + "}"
        case let array as [Any]: "[" + array.map(plain).joined(separator: ",") + "]"
        case let text as String: text.debugDescription
        case let number as NSNumber:
            String(cString: number.objCType) == "c" ? "\(number.boolValue)" : "\(number.doubleValue)"
        case is NSNull: "null"
        default: "?\(value)"
        }
    }
}

@Suite struct ScanResultSampleTests {
    @Test("Every documented sample shape reads without rejections, with the counts samples/README.md gives", arguments: [
        ("scan.json", ScanResultFile.Shape.photoObject, 12, 1),
        ("bare-list.json", .detectionList, 4, 1),
        ("envelope-two-scans.json", .envelope, 5, 2),
        ("array-boxes.json", .detectionList, 3, 1),
        ("string-numbers.json", .detectionList, 2, 1),
    ])
    func samples(file: String, shape: ScanResultFile.Shape, detections: Int, scans: Int) throws {
        let scan = try ScanResultFile(path: Samples.shelfScan(file))
        #expect(scan.shape == shape)
        #expect(scan.records.count == detections)
        #expect(scan.scans.count == scans)
        #expect(scan.rejected.isEmpty)
        #expect(scan.records.allSatisfy { !codes($0).contains(ScanFindingCode.confidenceInvalid) })
    }

    @Test("The sample boxes as arrays and as numeric strings are the same boxes as in scan.json")
    func sampleBoxesAgree() throws {
        let reference = try ScanResultFile(path: Samples.shelfScan("scan.json")).records
        func box(_ title: String) -> BoundingBox? { reference.first { $0.title == title }?.scan?.boundingBox }
        for file in ["array-boxes.json", "string-numbers.json", "bare-list.json", "envelope-two-scans.json"] {
            for record in try ScanResultFile(path: Samples.shelfScan(file)).records where record.scan?.boundingBox != nil {
                #expect(record.scan?.boundingBox == box(record.title), "\(file): \(record.title)")
            }
        }
    }

    @Test("The envelope sample routes Emma (exactly 0.60) to verified and STATION ELEVEN (0.42) to review")
    func envelopeSampleRouting() throws {
        var records = try ScanResultFile(path: Samples.shelfScan("envelope-two-scans.json")).records
        for index in records.indices { ReviewRouting.standard.route(&records[index]) }
        #expect(records.map(\.reviewStatus) == [.verified, .verified, .verified, .needsReview, .verified])
        #expect(records.map { $0.scan?.index } == [1, 2, 1, 2, 3])
    }
}
