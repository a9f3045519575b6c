import BookpipeCore
import BookpipeImaging
import BookpipeLibrary
import Foundation
import Mustache

/// `bookpipe review sheet`: the queue as self-contained HTML pages, so a person can look through
/// the spines at a glance. Each item shows its spine crop (inline as a `data:` JPEG, so each page
/// is one file with no network access), its fields, and the exact shell-quoted commands that
/// verify or edit it.
///
/// **Pages.** At most ``pageSize`` items (100 by default) go on a page: `index.html` holds the
/// newest, `page-2.html`, `page-3.html` … the rest, each linked to the others. Pages are made one
/// at a time (that page's records read, its photos decoded once for its crops, written, let go),
/// so memory stays flat however long the queue is. Pages left in the folder by an earlier, longer
/// sheet are not deleted; the new pages do not link to them.
///
/// Every data text goes through the template's HTML escaping; commands are quoted for a POSIX
/// shell with ``ShellQuoting``, so a detected title such as `'$(rm -rf /)` stays inert when pasted.
///
/// ```swift
/// let queue = try ReviewQueue(libraryPath: "library.sqlite")
/// let sheet = try ReviewSheet(queue: queue, libraryPath: "library.sqlite").write(to: "review-sheet")
/// print(sheet.page, sheet.items, sheet.pages)
/// ```
public struct ReviewSheet: Sendable {
    /// The queue to render.
    public let queue: ReviewQueue
    /// The library path as the person gave it: the commands name it (omitted when it is the default).
    public let libraryPath: String
    /// The longest edge of a crop in the page, in pixels.
    public var cropEdge: Int
    /// The most items on one page.
    public var pageSize: Int

    /// The name of the first page inside the output folder.
    public static let pageName = "index.html"

    /// The file name of page `number` (1-based): ``pageName`` for the first, `page-N.html` after.
    public static func pageName(_ number: Int) -> String {
        number <= 1 ? pageName : "page-\(number).html"
    }

    /// A sheet over a queue.
    /// - Parameters:
    ///   - queue: The review queue.
    ///   - libraryPath: The library path for the commands (`library.sqlite` is left out).
    ///   - cropEdge: The longest edge of each crop.
    ///   - pageSize: The most items on one page (at least 1).
    public init(queue: ReviewQueue, libraryPath: String, cropEdge: Int = 480, pageSize: Int = 100) {
        self.queue = queue
        self.libraryPath = libraryPath
        self.cropEdge = cropEdge
        self.pageSize = max(1, pageSize)
    }

    /// One item of the sheet, as rendered.
    public struct Item: Sendable, Hashable {
        /// The record id.
        public var id: String
        /// `scan` or `match`.
        public var kind: ReviewKind
        /// The title as read.
        public var title: String
        /// The authors as read.
        public var authors: [String]
        /// The detector's confidence, when given.
        public var confidence: Double?
        /// What was wrong with a confidence that was given but invalid (``ReviewQueue/invalidConfidence(of:)``).
        public var invalidConfidence: String?
        /// The spine crop (JPEG), nil when no photo is available or it could not be read.
        public var crop: [UInt8]?
        /// Why there is no crop, or a note on the crop (whole photo shown).
        public var cropNote: String?
        /// The command that verifies the item as it is; nil where `review verify` refuses it (an
        /// uncertain match that is not an unsure detection: verifying it would accept nothing).
        public var verifyCommand: String?
        /// The command that edits the item, prefilled with its current fields.
        public var editCommand: String
        /// The candidates (match items), as `review show` numbers them, each with its command.
        public var choices: [Choice]
        /// The command that says none of the candidates is the book; nil without candidates.
        public var noneCommand: String?
    }

    /// A candidate of a match item, and the command that chooses it.
    public struct Choice: Sendable, Hashable {
        /// Its number, from 1.
        public var number: Int
        /// Title — authors (year, source), then the score and its breakdown by field.
        public var summary: String
        /// Why choosing it asks first (the author disagrees with the row's), when it does.
        public var caution: String?
        /// The command that chooses it.
        public var command: String
    }

    /// One line for a candidate: `Title — Authors (year, source) · score 150: title 100, author 50`.
    public static func summary(of candidate: Candidate) -> String {
        let authors = candidate.authors.isEmpty ? "" : " — " + candidate.authors.joined(separator: ", ")
        let details = ([candidate.year.map(String.init)] + [candidate.source]).compactMap { $0 }.joined(separator: ", ")
        let breakdown = ["title", "author", "year", "isbn"].compactMap { field in
            candidate.breakdown[field].map { "\(field) \($0)" }
        }.joined(separator: ", ")
        return "\(candidate.title)\(authors) (\(details)) · score \(candidate.score)" + (breakdown.isEmpty ? "" : ": \(breakdown)")
    }

    /// What ``write(to:)`` produced.
    public struct Written: Sendable {
        /// The first page's path.
        public var page: String
        /// How many items the pages show.
        public var items: Int
        /// How many of them have a crop.
        public var crops: Int
        /// How many pages were written.
        public var pages: Int
    }

    /// Where a page sits among the sheet's pages, for its header and links.
    public struct Page: Sendable, Hashable {
        /// The page's number, from 1.
        public var number: Int
        /// How many pages the sheet has.
        public var count: Int
        /// How many items the whole sheet shows.
        public var totalItems: Int
        /// How many items come before this page's first.
        public var offset: Int

        /// A sheet of one page holding `items` items.
        public static func single(_ items: Int) -> Page {
            Page(number: 1, count: 1, totalItems: items, offset: 0)
        }

        /// Creates a page position.
        public init(number: Int, count: Int, totalItems: Int, offset: Int) {
            self.number = number
            self.count = count
            self.totalItems = totalItems
            self.offset = offset
        }
    }

    /// Some of the queue's items with their crops and commands, newest first: `limit` items after
    /// the first `offset` (all by default). Each photo is decoded once for all these items.
    /// - Parameters:
    ///   - offset: How many queued items to leave out first.
    ///   - limit: At most this many; nil for the rest of the queue.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func items(offset: Int = 0, limit: Int? = nil) async throws(StoreError) -> [Item] {
        let queued = try await queue.store.reviewQueue(kind: nil, limit: limit, offset: offset)
        var crops: [Int: SpineCrop] = [:]
        var failures: [Int: String] = [:]
        var byPhoto: [String: [Int]] = [:]
        let available = try await queue.availablePhotos(of: queued.map(\.record))
        for (index, item) in queued.enumerated() {
            if let path = item.record.scan?.photoPath, available.contains(path) { byPhoto[path, default: []].append(index) }
        }
        let cropper = SpineCropper()
        for (path, indices) in byPhoto.sorted(by: { $0.key < $1.key }) {
            let boxes = indices.map { index in
                queued[index].record.scan?.boundingBox.map { NormalizedBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
                    ?? .whole
            }
            do {
                guard let photo = try await queue.store.scanPhoto(storedAt: path) else {
                    throw StoreError.readFailed(path: queue.store.location, what: "the photo's copy \(path)", reason: "it is gone")
                }
                let made = try cropper.crops(photo: photo, file: path, boxes: boxes, maxEdge: cropEdge)
                for (index, crop) in zip(indices, made) { crops[index] = crop }
            } catch {
                for index in indices { failures[index] = "crop failed: \(ReviewQueue.cropFailure(error)); review is text only" }
            }
        }
        let library = ShellQuoting.libraryOption(libraryPath)
        var absences: [Int: String] = [:]
        for (index, item) in queued.enumerated() where crops[index] == nil && failures[index] == nil {
            absences[index] = await queue.photoAbsence(of: item.record)
        }
        return queued.enumerated().map { index, item in
            let record = item.record
            let id = ShellQuoting.quote(record.id)
            let authors = record.authors.map { " " + ShellQuoting.option("--author", $0) }.joined()
            let candidates = record.enrichment?.candidates ?? []
            let choices = candidates.enumerated().map { offset, candidate in
                Choice(number: offset + 1, summary: Self.summary(of: candidate),
                       caution: ReviewRules.authorDisagreement(choosing: candidate, for: record),
                       command: "bookpipe review choose \(id) \(offset + 1)\(library)")
            }
            // Only commands that work: the same rule `review verify` applies.
            let state = ReviewState(reviewStatus: record.reviewStatus, status: record.status, candidates: candidates.count)
            let verifies = ReviewRules.refusal(.verify, id: record.id, state: state) == nil
            let crop = crops[index]
            let note = crop?.note ?? failures[index]
                ?? (crop == nil ? "no photo: \(absences[index] ?? "none stored"); review is text only" : nil)
            return Item(id: record.id, kind: item.kind ?? .scan, title: record.title, authors: record.authors,
                        confidence: record.scan?.confidence, invalidConfidence: ReviewQueue.invalidConfidence(of: record),
                        crop: crop?.jpeg, cropNote: note,
                        verifyCommand: verifies ? "bookpipe review verify \(id)\(library)" : nil,
                        editCommand: "bookpipe review edit \(id) \(ShellQuoting.option("--title", record.title))\(authors)\(library)",
                        choices: choices,
                        noneCommand: candidates.isEmpty ? nil : "bookpipe review choose \(id) --none\(library)")
        }
    }

    /// The sheet's template, parsed.
    static func template() throws -> MustacheTemplate {
        try MustacheTemplate(string: String(decoding: PackageResources.review_sheet_html_mustache, as: UTF8.self))
    }

    /// One page of the sheet.
    /// - Parameters:
    ///   - items: From ``items(offset:limit:)``.
    ///   - page: Where the page sits among the sheet's pages (one page by default).
    ///   - generatedAt: The time shown in the header.
    /// - Throws: The template's parse error if the embedded template is broken (a build defect).
    public func html(_ items: [Item], page: Page? = nil, generatedAt: Date = Date()) throws -> String {
        try render(items, page: page ?? .single(items.count), generatedAt: generatedAt, template: Self.template())
    }

    private func render(_ items: [Item], page: Page, generatedAt: Date, template: MustacheTemplate) -> String {
        let rows: [[String: Any]] = items.enumerated().map { index, item in
            var row: [String: Any] = [
                "number": "\(page.offset + index + 1)",
                "id": item.id,
                "kind": item.kind.rawValue,
                "title": item.title,
                "authors": item.authors.isEmpty ? "(no author)" : item.authors.joined(separator: "; "),
                "confidence": item.confidence.map { String(format: "%.2f", $0) } ?? item.invalidConfidence ?? "none given",
                "low": (item.confidence ?? 1) < 0.6 || item.invalidConfidence != nil,
                "edit": item.editCommand,
                "choices": item.choices.map { choice -> [String: Any] in
                    var row: [String: Any] = ["number": "\(choice.number)", "summary": choice.summary, "command": choice.command]
                    if let caution = choice.caution { row["caution"] = caution + "; the command asks before choosing it" }
                    return row
                },
                "hasChoices": !item.choices.isEmpty,
            ]
            if let verify = item.verifyCommand { row["verify"] = verify }
            if let none = item.noneCommand { row["none"] = none }
            if let crop = item.crop { row["crop"] = "data:image/jpeg;base64," + Data(crop).base64EncodedString() }
            if let note = item.cropNote { row["note"] = note }
            return row
        }
        var context: [String: Any] = [
            "count": "\(page.totalItems)",
            "plural": page.totalItems != 1,
            "library": libraryPath,
            "generatedAt": ISO8601DateFormatter().string(from: generatedAt),
            "items": rows,
            "empty": page.totalItems == 0,
        ]
        if page.count > 1 {
            var navigation: [String: Any] = [
                "page": "\(page.number)", "pageCount": "\(page.count)",
                "first": "\(page.offset + 1)", "last": "\(page.offset + items.count)",
                "links": (1...page.count).map { number -> [String: Any] in
                    ["number": "\(number)", "href": Self.pageName(number), "current": number == page.number]
                },
            ]
            if page.number > 1 { navigation["previous"] = Self.pageName(page.number - 1) }
            if page.number < page.count { navigation["next"] = Self.pageName(page.number + 1) }
            context["pages"] = navigation
        }
        return template.render(context)
    }

    /// Writes the sheet into `directory` (created when needed): ``pageName`` and, for a queue longer
    /// than ``pageSize``, `page-2.html` … — one page at a time, each page's crops made, written and
    /// let go before the next page is read.
    /// - Returns: The first page's path and counts.
    /// - Throws: ``ReviewSheetError`` when `directory` is a file or the folder or a page cannot be
    ///   written (the folder is checked before any crop is made); ``StoreError``.
    public func write(to directory: String) async throws -> Written {
        try Self.prepareFolder(directory)
        let template = try Self.template()
        let total = try await queue.store.reviewQueueCount(kind: nil)
        let pageCount = max(1, (total + pageSize - 1) / pageSize)
        let generatedAt = Date()
        var written = Written(page: (directory as NSString).appendingPathComponent(Self.pageName), items: 0, crops: 0,
                              pages: 0)
        for number in 1...pageCount {
            let offset = (number - 1) * pageSize
            let items = try await self.items(offset: offset, limit: pageSize)
            let page = Page(number: number, count: pageCount, totalItems: total, offset: offset)
            let path = (directory as NSString).appendingPathComponent(Self.pageName(number))
            do {
                try Data(render(items, page: page, generatedAt: generatedAt, template: template).utf8)
                    .write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw ReviewSheetError.cannotWrite(path: path, reason: Self.reason(error))
            }
            written.items += items.count
            written.crops += items.filter { $0.crop != nil }.count
            written.pages += 1
        }
        return written
    }

    /// Makes the output folder, or says what is wrong with the path.
    static func prepareFolder(_ directory: String) throws(ReviewSheetError) {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isFolder) {
            guard isFolder.boolValue else { throw .outputIsFile(path: directory) }
            return
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .cannotWrite(path: directory, reason: reason(error))
        }
    }

    /// The system's reason for a file-system error, without Foundation's domain and code.
    static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
           let text = strerror(Int32(underlying.code)) {
            return String(cString: text)
        }
        return error.localizedDescription
    }
}

/// Why `review sheet` could not write its page.
public enum ReviewSheetError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `--output` names a file, not a folder; the file is left as it is.
    case outputIsFile(path: String)
    /// The folder or the page cannot be written.
    case cannotWrite(path: String, reason: String)

    /// The message for people: what is wrong and what to pass.
    public var description: String {
        switch self {
        case .outputIsFile(let path):
            return "\(path) is a file, and --output takes a folder (the page is written as \(ReviewSheet.pageName) in it). "
                + "Pass a folder, new or existing, e.g. --output review-sheet; the file was left as it was."
        case .cannotWrite(let path, let reason):
            return "cannot write \(path) (\(reason)). Check that its folder is writable, or pass another folder with --output."
        }
    }
}

/// Quoting for commands printed to be pasted into a POSIX shell: plain words stay as they are,
/// anything else is single-quoted (a `'` inside becomes `'\''`), so `$(…)`, backticks, `;` and
/// globs are never interpreted.
public enum ShellQuoting {
    /// The text as one shell word.
    public static func quote(_ text: String) -> String {
        let safe = text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./:=@%+,".contains($0)) }
        return safe && !text.isEmpty ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// An option with its value as one shell word, `--name=value` (the value quoted): a value
    /// that starts with `-` (a title such as `--all`) is then still the option's value, where
    /// `--name value` would make the argument parser read it as an option of its own.
    ///
    /// ```swift
    /// ShellQuoting.option("--title", "--all")      // --title=--all
    /// ShellQuoting.option("--author", "O'Brien")   // --author='O'\''Brien'
    /// ```
    public static func option(_ name: String, _ value: String) -> String {
        name + "=" + quote(value)
    }

    /// The `--library` part of a printed command, with a leading space: nothing for the default
    /// library (`library.sqlite`), `--library PATH` for a path as people type it, and the
    /// `--library=PATH` form for a path that starts with `-`.
    public static func libraryOption(_ path: String) -> String {
        if path == "library.sqlite" { return "" }
        return path.hasPrefix("-") ? " " + option("--library", path) : " --library " + quote(path)
    }
}
