import BookpipeCore

/// One rule for a scan detection, wherever it came from: a detection object of a scan file
/// (``ScanResultFile``) and a `result` event of the vision backend (`bookpipe scan`) become a record
/// here, with the same title, author, ISBN, confidence and box rules and the same findings.
///
/// - **Title**: text, or a number read as its text (info); none, blank or another kind rejects the
///   detection.
/// - **Author**: text, a list of texts, or null; other kinds are left out with a warning.
/// - **ISBN**: text as written (normalisation checks it); a number is read as its digits (info);
///   another kind gives no ISBN (warning).
/// - **Confidence**: a number in 0…1; anything else (text, 1.7, −0.2, NaN) is never clamped: the
///   record keeps no confidence and an error finding that sends it to review (``ReviewRouting``).
/// - **Box** (`boundingBox`, `box` or `bbox`): `{x, y, width, height}` or `[x, y, width, height]`
///   of numbers or numeric texts; missing → warning; malformed → warning, no box; outside the
///   photo → kept, warning. Review shows the whole photo when there is no usable box.
public enum ScanDetectionRules {
    /// Why a detection cannot be a record.
    public struct Rejection: Error, Sendable, Hashable {
        /// What is wrong, for people (names the detection).
        public var reason: String
    }

    /// A detection given as JSON text (the vision backend's `result` event data) as a record.
    /// - Parameters:
    ///   - json: The detection object's JSON text.
    ///   - named: How messages name the detection (`the backend's detection 3 of shelf.jpg`).
    ///   - origin: Where the record comes from (its raw field is `json`).
    ///   - photoPath: The photo the detection was read from, if there is one.
    ///   - index: The detection's 1-based place among the photo's detections.
    public static func record(json: String, named: String, origin: RecordOrigin, photoPath: String?,
                              index: Int) -> Result<BookRecord, Rejection> {
        let bytes = Array(json.utf8)
        var parser = PositionedJSONParser(bytes: bytes, start: 0, describe: { "byte \($0 + 1)" })
        let node: JSONNode
        do {
            node = try parser.parseDocument()
        } catch {
            return .failure(Rejection(reason: "\(named) is not JSON (\(error.message) at byte \(error.offset + 1)); skipped"))
        }
        return record(node, named: named, origin: origin, photoPath: photoPath, index: index)
    }

    /// A parsed detection as a record, or why it cannot be one.
    static func record(_ node: JSONNode, named: String, origin: RecordOrigin, photoPath: String?,
                       index: Int) -> Result<BookRecord, Rejection> {
        guard case .object = node.value else {
            return .failure(Rejection(reason: "\(named) is \(node.kindDescription), not an object with a \"title\"; skipped"))
        }
        var findings: [Finding] = []
        let title: String
        let titleNode = node["title"]
        switch titleNode?.value {
        case .string(let text)? where !text.allSatisfy(\.isWhitespace):
            title = text
        case .number(_, let lexeme)?:
            title = lexeme
            findings.append(Finding(code: ScanFindingCode.titleNotText, severity: .info, field: "title",
                                    message: "\(named): the title is the number \(lexeme); it is read as the text \"\(lexeme)\"."))
        case nil, .null?, .string?:
            return .failure(Rejection(reason: "\(named) has no title; skipped. A detection needs the spine's \"title\" as text"))
        case .some:
            return .failure(Rejection(reason: "\(named): the title is \(titleNode?.kindDescription ?? "not text"), not text; skipped"))
        }
        let authors = readAuthors(node, named: named, findings: &findings)
        let isbns = readISBN(node["isbn"], named: named, findings: &findings)
        let confidence = readConfidence(node["confidence"], named: named, findings: &findings)
        let box = readBox(node, named: named, findings: &findings)
        var record = BookRecord(origin: origin, title: title, authors: authors, rawISBNs: isbns)
        record.scan = ScanDetection(confidence: confidence, boundingBox: box, photoPath: photoPath, index: index)
        for finding in findings { record.addFinding(finding) }
        return .success(record)
    }

    static func readAuthors(_ node: JSONNode, named: String, findings: inout [Finding]) -> [String] {
        let key = node["author"] != nil ? "author" : "authors"
        guard let value = node[key] else { return [] }
        switch value.value {
        case .null: return []
        case .string(let text): return text.allSatisfy(\.isWhitespace) ? [] : [text]
        case .array(let elements):
            var authors: [String] = []
            for element in elements {
                if case .string(let text) = element.value {
                    if !text.allSatisfy(\.isWhitespace) { authors.append(text) }
                } else {
                    findings.append(Finding(code: ScanFindingCode.authorInvalid, severity: .warning, field: "author",
                                            message: "\(named): an author in \"\(key)\" is \(element.kindDescription), not text; it is left out."))
                }
            }
            return authors
        default:
            findings.append(Finding(code: ScanFindingCode.authorInvalid, severity: .warning, field: "author",
                                    message: "\(named): \"\(key)\" is \(value.kindDescription), not text; the record has no author."))
            return []
        }
    }

    /// The detection's ISBN as written, for normalisation to check (never repaired or made up
    /// here): text as it is, a number as its digits (with a finding), nothing for null, blank text
    /// or a missing key, and nothing with a finding for any other kind of value.
    static func readISBN(_ node: JSONNode?, named: String, findings: inout [Finding]) -> [String] {
        guard let node else { return [] }
        switch node.value {
        case .null: return []
        case .string(let text): return text.allSatisfy(\.isWhitespace) ? [] : [text]
        case .number(_, let lexeme):
            findings.append(Finding(code: ScanFindingCode.isbnNotText, severity: .info, field: "isbn",
                                    message: "\(named): the ISBN is the number \(lexeme); it is read as the text \"\(lexeme)\"."))
            return [lexeme]
        default:
            findings.append(Finding(code: ScanFindingCode.isbnNotText, severity: .warning, field: "isbn",
                                    message: "\(named): \"isbn\" is \(node.kindDescription), not text; the record has no ISBN."))
            return []
        }
    }

    /// The confidence when it is a number in 0…1; nil (with a finding when it was there but not
    /// such a number) otherwise. Never clamped.
    static func readConfidence(_ node: JSONNode?, named: String, findings: inout [Finding]) -> Double? {
        guard let node else { return nil }
        let problem: String
        switch node.value {
        case .null: return nil
        case .number(let value, let lexeme):
            if value.isFinite, value >= 0, value <= 1 { return value }
            problem = value.isFinite ? "is \(lexeme), outside 0…1" : "is \(lexeme), too large to be a number in 0…1"
        case .nonFinite(let literal):
            problem = "is the literal \(literal), not a number in 0…1"
        case .string(let text):
            problem = "is the text \"\(text.prefix(40))\", not a number"
        default:
            problem = "is \(node.kindDescription), not a number in 0…1"
        }
        findings.append(Finding(code: ScanFindingCode.confidenceInvalid, severity: .error, field: "confidence",
                                message: "\(named): the confidence \(problem). It is not used (never clamped); "
                                    + "the detection goes to review."))
        return nil
    }

    static func readBox(_ node: JSONNode, named: String, findings: inout [Finding]) -> BoundingBox? {
        let key = ["boundingBox", "box", "bbox"].first { node[$0] != nil } ?? "boundingBox"
        func invalid(_ problem: String) -> BoundingBox? {
            findings.append(Finding(code: ScanFindingCode.boxInvalid, severity: .warning, field: "boundingBox",
                                    message: "\(named): the bounding box \(problem); review shows the whole photo."))
            return nil
        }
        guard let value = node[key], !isNull(value) else {
            findings.append(Finding(code: ScanFindingCode.boxMissing, severity: .warning, field: "boundingBox",
                                    message: "\(named) has no bounding box; review shows the whole photo."))
            return nil
        }
        var numbers: [Double] = []
        let names = ["x", "y", "width", "height"]
        switch value.value {
        case .object:
            for name in names {
                guard let component = value[name] else { return invalid("has no \"\(name)\"") }
                switch boxNumber(component) {
                case .success(let number): numbers.append(number)
                case .failure(let problem): return invalid("\"\(name)\" \(problem.text)")
                }
            }
        case .array(let elements):
            guard elements.count == 4 else {
                return invalid("is a list of \(elements.count) values, not [x, y, width, height]")
            }
            for (name, element) in zip(names, elements) {
                switch boxNumber(element) {
                case .success(let number): numbers.append(number)
                case .failure(let problem): return invalid("\(name) \(problem.text)")
                }
            }
        default:
            return invalid("is \(value.kindDescription), not {\"x\", \"y\", \"width\", \"height\"} or [x, y, width, height]")
        }
        let box = BoundingBox(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        if !box.isValid {
            findings.append(Finding(
                code: ScanFindingCode.boxInvalid, severity: .warning, field: "boundingBox",
                message: "\(named): the bounding box (x \(box.x), y \(box.y), width \(box.width), height \(box.height)) "
                    + "has no size or lies outside the photo (coordinates are 0…1 of the upright photo); "
                    + "it is kept, and review shows the whole photo."))
        }
        return box
    }

    struct BoxProblem: Error {
        var text: String
    }

    /// A box coordinate: a finite number, or a text holding one.
    static func boxNumber(_ node: JSONNode) -> Result<Double, BoxProblem> {
        switch node.value {
        case .number(let value, let lexeme):
            return value.isFinite ? .success(value) : .failure(BoxProblem(text: "is \(lexeme), too large"))
        case .string(let text):
            guard let value = PositionedJSONParser.number(inText: text), value.isFinite else {
                return .failure(BoxProblem(text: "is the text \"\(text.prefix(40))\", not a number"))
            }
            return .success(value)
        case .nonFinite(let literal):
            return .failure(BoxProblem(text: "is the literal \(literal), not a number"))
        default:
            return .failure(BoxProblem(text: "is \(node.kindDescription), not a number"))
        }
    }

    static func isNull(_ node: JSONNode) -> Bool {
        if case .null = node.value { return true }
        return false
    }
}
