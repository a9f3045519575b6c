import BookpipeCore
import BookpipeImaging
import BookpipeStore
import Foundation
import Mustache

/// `bookpipe review sheet`: the whole queue as one self-contained HTML page, so a person can look
/// through 50 spines at a glance. Each item shows its spine crop (inline as a `data:` JPEG, so the
/// page is one file with no network access), its fields, and the exact shell-quoted commands that
/// verify or edit it.
///
/// Every data text goes through the template's HTML escaping; commands are quoted for a POSIX
/// shell with ``ShellQuoting``, so a detected title such as `'$(rm -rf /)` stays inert when pasted.
///
/// ```swift
/// let queue = try ReviewQueue(libraryPath: "library.sqlite")
/// let sheet = try ReviewSheet(queue: queue, libraryPath: "library.sqlite").write(to: "review-sheet")
/// print(sheet.page, sheet.items)
/// ```
public struct ReviewSheet: Sendable {
    /// The queue to render.
    public let queue: ReviewQueue
    /// The library path as the person gave it: the commands name it (omitted when it is the default).
    public let libraryPath: String
    /// The longest edge of a crop in the page, in pixels.
    public var cropEdge: Int

    /// The name of the page inside the output folder.
    public static let pageName = "index.html"

    /// A sheet over a queue.
    /// - Parameters:
    ///   - queue: The review queue.
    ///   - libraryPath: The library path for the commands (`library.sqlite` is left out).
    ///   - cropEdge: The longest edge of each crop.
    public init(queue: ReviewQueue, libraryPath: String, cropEdge: Int = 480) {
        self.queue = queue
        self.libraryPath = libraryPath
        self.cropEdge = cropEdge
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
        /// The spine crop (JPEG), nil when no photo is available or it could not be read.
        public var crop: [UInt8]?
        /// Why there is no crop, or a note on the crop (whole photo shown).
        public var cropNote: String?
        /// The command that verifies the item as it is.
        public var verifyCommand: String
        /// The command that edits the item, prefilled with its current fields.
        public var editCommand: String
        /// The commands that choose a candidate (match items), one per candidate.
        public var chooseCommands: [String]
    }

    /// What ``write(to:)`` produced.
    public struct Written: Sendable {
        /// The page's path.
        public var page: String
        /// How many items the page shows.
        public var items: Int
        /// How many of them have a crop.
        public var crops: Int
    }

    /// The queue's items with their crops and commands, newest first. Each photo is decoded once
    /// for all its items.
    /// - Throws: ``StoreError`` when the library cannot be read.
    public func items() throws(StoreError) -> [Item] {
        let queued = try queue.store.reviewQueue(kind: nil)
        var crops: [Int: SpineCrop] = [:]
        var failures: [Int: String] = [:]
        var byPhoto: [String: [Int]] = [:]
        for (index, item) in queued.enumerated() {
            if let path = queue.photoPath(of: item.record) { byPhoto[path, default: []].append(index) }
        }
        let cropper = SpineCropper()
        for (path, indices) in byPhoto.sorted(by: { $0.key < $1.key }) {
            let boxes = indices.map { index in
                queued[index].record.scan?.boundingBox.map { NormalizedBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
                    ?? .whole
            }
            do {
                let made = try cropper.crops(photo: try FileIO.read(path), file: path, boxes: boxes, maxEdge: cropEdge)
                for (index, crop) in zip(indices, made) { crops[index] = crop }
            } catch {
                for index in indices { failures[index] = "crop failed: \(ReviewQueue.cropFailure(error)); review is text only" }
            }
        }
        let library = ShellQuoting.libraryOption(libraryPath)
        return queued.enumerated().map { index, item in
            let record = item.record
            let id = ShellQuoting.quote(record.id)
            let authors = record.authors.map { " " + ShellQuoting.option("--author", $0) }.joined()
            let candidates = record.enrichment?.candidates ?? []
            var choose = candidates.indices.map { "bookpipe review choose \(id) \($0 + 1)\(library)" }
            if !candidates.isEmpty { choose.append("bookpipe review choose \(id) --none\(library)") }
            let crop = crops[index]
            let note = crop?.note ?? failures[index]
                ?? (crop == nil ? "no photo: \(queue.photoAbsence(of: record) ?? "none stored"); review is text only" : nil)
            return Item(id: record.id, kind: item.kind ?? .scan, title: record.title, authors: record.authors,
                        confidence: record.scan?.confidence, crop: crop?.jpeg, cropNote: note,
                        verifyCommand: "bookpipe review verify \(id)\(library)",
                        editCommand: "bookpipe review edit \(id) \(ShellQuoting.option("--title", record.title))\(authors)\(library)",
                        chooseCommands: choose)
        }
    }

    /// The page for some items.
    /// - Parameters:
    ///   - items: From ``items()``.
    ///   - generatedAt: The time shown in the header.
    /// - Throws: The template's parse error if the embedded template is broken (a build defect).
    public func html(_ items: [Item], generatedAt: Date = Date()) throws -> String {
        let template = try MustacheTemplate(string: String(decoding: PackageResources.review_sheet_html_mustache, as: UTF8.self))
        let rows: [[String: Any]] = items.enumerated().map { number, item in
            var row: [String: Any] = [
                "number": "\(number + 1)",
                "id": item.id,
                "kind": item.kind.rawValue,
                "title": item.title,
                "authors": item.authors.isEmpty ? "(no author)" : item.authors.joined(separator: "; "),
                "confidence": item.confidence.map { String(format: "%.2f", $0) } ?? "none given",
                "low": (item.confidence ?? 1) < 0.6,
                "verify": item.verifyCommand,
                "edit": item.editCommand,
                "choose": item.chooseCommands,
                "hasChoose": !item.chooseCommands.isEmpty,
            ]
            if let crop = item.crop { row["crop"] = "data:image/jpeg;base64," + Data(crop).base64EncodedString() }
            if let note = item.cropNote { row["note"] = note }
            return row
        }
        let formatter = ISO8601DateFormatter()
        return template.render([
            "count": "\(items.count)",
            "plural": items.count != 1,
            "library": libraryPath,
            "generatedAt": formatter.string(from: generatedAt),
            "items": rows,
            "empty": items.isEmpty,
        ] as [String: Any])
    }

    /// Writes the page (``pageName``) into `directory`, creating it when needed.
    /// - Returns: The page's path and counts.
    /// - Throws: ``ReviewSheetError`` when `directory` is a file or the folder or page cannot be
    ///   written (checked before any crop is made); ``StoreError``.
    public func write(to directory: String) throws -> Written {
        try Self.prepareFolder(directory)
        let items = try items()
        let page = (directory as NSString).appendingPathComponent(Self.pageName)
        do {
            try Data(try html(items).utf8).write(to: URL(fileURLWithPath: page), options: .atomic)
        } catch {
            throw ReviewSheetError.cannotWrite(path: page, reason: Self.reason(error))
        }
        return Written(page: page, items: items.count, crops: items.filter { $0.crop != nil }.count)
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
