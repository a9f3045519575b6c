import BookpipeCore
import BookpipeImaging
import BookpipeLibrary
import Foundation

/// The review queue of one library, for the `bookpipe review` commands: listing, showing an item
/// with its spine crop, and the decisions (verify / edit / choose), each written at once through
/// the library's writer and followed by the photo cleanup.
///
/// ```swift
/// let queue = ReviewQueue(store: library)
/// for entry in try await queue.list(kind: .scan) { print(entry.id, entry.title) }
/// try await queue.verify(ids: ["ab12…:3"])
/// ```
public struct ReviewQueue: Sendable {
    /// The library (its managed photo copies too: ``LibraryPhotoStore``).
    public let store: any Library

    /// A queue over an open library.
    public init(store: any Library) {
        self.store = store
    }

    /// The queued items, newest first.
    /// - Parameter kind: Only one kind; nil for both.
    /// - Throws: ``StoreError``.
    ///
    /// Reads only the listed columns (``LibraryReviewStore/reviewQueueEntries(kind:)``) and asks the
    /// library once about the distinct photos, so 10,000 items from one shelf photo cost one check.
    public func list(kind: ReviewKind? = nil) async throws(StoreError) -> [ReviewListEntry] {
        let entries = try await store.reviewQueueEntries(kind: kind)
        let available = try await store.availableScanPhotos(storedAt: Set(entries.compactMap(\.photoPath)))
        return entries.map { entry in
            ReviewListEntry(entry, photoAvailable: entry.photoPath.map(available.contains) ?? false)
        }
    }

    /// The list as JSON Lines: one object a line with the keys `id`, `kind`, `title`, `authors`,
    /// `confidence`, `photo`, `boundingBox`, `createdAt` (keys sorted); nothing for an empty list.
    public static func jsonLines(_ entries: [ReviewListEntry]) -> [String] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return entries.compactMap { entry in (try? encoder.encode(entry)).map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The list as lines for people, with a count first.
    public static func text(_ entries: [ReviewListEntry]) -> [String] {
        var lines = ["\(entries.count) item\(entries.count == 1 ? "" : "s") to review (newest first)"]
        lines.reserveCapacity(entries.count + 1)
        // Detectors repeat their confidences: each distinct value is formatted once.
        var formatted: [Double: String] = [:]
        for entry in entries {
            let confidence = entry.confidence.map { value in
                if let text = formatted[value] { return text }
                let text = String(format: "%.2f", value)
                formatted[value] = text
                return text
            } ?? "-"
            let authors = entry.authors.isEmpty ? "(no author)" : entry.authors.joined(separator: ", ")
            lines.append("\(entry.id)  \(entry.kind.rawValue)  \(confidence)  \(entry.title) — \(authors)"
                         + (entry.photo ? "" : "  [no photo]"))
        }
        return lines
    }

    /// Whether the record's photo has its managed copy in the library (false: review is text only).
    /// - Throws: ``StoreError`` when the library cannot be asked.
    public func hasPhoto(_ record: BookRecord) async throws(StoreError) -> Bool {
        guard let stored = record.scan?.photoPath else { return false }
        return try await !store.availableScanPhotos(storedAt: [stored]).isEmpty
    }

    /// Which of these records' photos have their managed copy, by stored photo path (one question).
    /// - Throws: ``StoreError`` when the library cannot be asked.
    public func availablePhotos(of records: [BookRecord]) async throws(StoreError) -> Set<String> {
        try await store.availableScanPhotos(storedAt: Set(records.compactMap { $0.scan?.photoPath }))
    }

    /// The bytes of the record's photo copy, read from the library (a file beside a SQLite library,
    /// a row of a PostgreSQL one), with the name messages give it; nil when there is none.
    /// - Throws: ``StoreError`` when the copy is there but cannot be read.
    public func photo(of record: BookRecord) async throws(StoreError) -> (bytes: [UInt8], name: String)? {
        guard let stored = record.scan?.photoPath, let bytes = try await store.scanPhoto(storedAt: stored) else { return nil }
        return (bytes, stored)
    }

    /// An item's details for `review show`, and its spine crop written to `cropPath` when given.
    ///
    /// The fields are always shown: when the crop cannot be made (the photo's copy cannot be read
    /// or decoded, or the crop file cannot be written) one line says why, the crop file is not
    /// written, and review goes on as text only, as for a missing photo.
    /// - Parameters:
    ///   - id: A record id.
    ///   - cropPath: Where to write the crop (JPEG), or nil.
    /// - Returns: The lines to print.
    /// - Throws: ``ReviewError/unknownID(_:)``, ``StoreError``.
    public func show(id: String, cropPath: String? = nil) async throws -> [String] {
        guard let item = try await store.reviewItem(id: id) else { throw ReviewError.unknownID(id) }
        let record = item.record
        let provenance = try await store.provenance(of: record)
        var lines = ["\(record.id)  (\(item.kind.map { "queued: \($0.rawValue)" } ?? "not queued"), review status \(record.reviewStatus.rawValue), \(record.status.rawValue))"]
        lines.append("  title:      \(record.title)  [from \(provenance["title"] ?? "file")]")
        lines.append("  authors:    \(record.authors.isEmpty ? "(none)" : record.authors.joined(separator: "; "))  [from \(provenance["authors"] ?? "file")]")
        if let scan = record.scan {
            lines.append("  confidence: \(scan.confidence.map { String($0) } ?? Self.invalidConfidence(of: record) ?? "none given")")
            if let box = scan.boundingBox {
                lines.append("  box:        x \(box.x), y \(box.y), width \(box.width), height \(box.height)"
                             + (box.isValid ? "" : " (invalid: the whole photo is shown)"))
            } else {
                lines.append("  box:        none (the whole photo is shown)")
            }
        }
        if let match = record.enrichment?.match {
            lines.append("  match:      \(match.title) — \(match.authors.joined(separator: ", ")) (\(match.identity), score \(match.score))  [from \(provenance["match"] ?? match.source)]")
        }
        let candidates = record.enrichment?.candidates ?? []
        if !candidates.isEmpty {
            lines.append("  candidates:")
            for (index, candidate) in candidates.enumerated() {
                let breakdown = candidate.breakdown.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                lines.append("    \(index + 1). \(candidate.title) — \(candidate.authors.joined(separator: ", "))"
                             + (candidate.year.map { " (\($0))" } ?? "")
                             + "  score \(candidate.score)" + (breakdown.isEmpty ? "" : " [\(breakdown)]")
                             + "  \(candidate.source) \(candidate.identity)")
            }
        }
        for finding in record.findings { lines.append("  \(finding.severity.rawValue): \(finding.message)") }
        if let cropPath {
            let made: SpineCrop?
            do {
                made = try await crop(of: record)
                if let made { try FileIO.write(made.jpeg, to: cropPath) }
            } catch {
                lines.append("  crop:       not written: \(Self.cropFailure(error)); review is text only")
                return lines
            }
            if let crop = made {
                lines.append("  crop:       \(cropPath) (\(crop.width)x\(crop.height)\(crop.note.map { "; \($0)" } ?? ""))")
            } else {
                let absence = await photoAbsence(of: record)
                lines.append("  crop:       not written: \(absence ?? "no photo"); review is text only")
            }
        } else if record.scan != nil, let absence = await photoAbsence(of: record) {
            lines.append("  photo:      none: \(absence); review is text only")
        }
        return lines
    }

    /// Why a record has no photo to crop, in a few words for people (`review show`, the sheet), or
    /// nil when its photo's managed copy is there.
    ///
    /// Told apart from what the record holds: not a scan detection; a photo refused at import (its
    /// finding's message: outside the scan folder, missing, cut off, …); a scan that named none; a
    /// copy deleted once every detection of the photo was reviewed (the cleanup clears the path of
    /// reviewed detections); a stored copy that is no longer in the managed folder.
    public func photoAbsence(of record: BookRecord) async -> String? {
        guard let scan = record.scan else { return "not a scan detection, so there is no photo" }
        if let stored = scan.photoPath {
            guard let available = try? await store.availableScanPhotos(storedAt: [stored]) else {
                return "the photo's copy \(stored) cannot be read from the library"
            }
            return available.isEmpty ? "the photo's copy \(stored) is missing from the library's photos" : nil
        }
        if let refused = record.findings.first(where: { $0.code == ScanFindingCode.photoRefused }) {
            return "the photo was refused at import (\(refused.message))"
        }
        if record.findings.contains(where: { $0.code == ScanFindingCode.photoMissing }) {
            return "the scan named no photo"
        }
        if record.reviewStatus == .verified || record.reviewStatus == .userEdited {
            return "the photo's copy was deleted once every detection from it was reviewed and looked up"
        }
        return "no photo was stored with the detection"
    }

    /// What to show for a detection whose confidence was there but invalid (a string, 1.7, NaN):
    /// the value as given, from the reader's ``ScanFindingCode/confidenceInvalid`` finding, for
    /// example `invalid: 1.7 as given, outside 0…1 (not used, never clamped)`; nil when the
    /// detection has a valid confidence or none at all.
    public static func invalidConfidence(of record: BookRecord) -> String? {
        guard record.scan?.confidence == nil,
              let finding = record.findings.first(where: { $0.code == ScanFindingCode.confidenceInvalid })
        else { return nil }
        // The reader's message: "<detection>: the confidence <problem>. It is not used (never clamped); …".
        var problem = finding.message
        if let start = problem.range(of: ": the confidence ") { problem = String(problem[start.upperBound...]) }
        if let end = problem.range(of: ". It is not used") { problem = String(problem[..<end.lowerBound]) }
        return "invalid: it \(problem) (not used, never clamped)"
    }

    /// Why a crop could not be made or written, in a few words for the line that says so.
    static func cropFailure(_ error: any Error) -> String {
        guard let imaging = error as? ImagingError else { return "\(error)" }
        let detail = imaging.detail.isEmpty ? "" : " (\(imaging.detail))"
        switch imaging.code {
        case .truncated: return "the photo's copy \(imaging.file) is cut off\(detail)"
        case .corrupt, .notJPEG, .unsupported, .tooManyPixels, .emptyFile:
            return "the photo's copy \(imaging.file) cannot be decoded\(detail)"
        case .unreadableFile: return "the photo's copy \(imaging.file) cannot be read\(detail)"
        case .unwritableFile, .outputExists: return "cannot write \(imaging.file)\(detail)"
        case .encodeFailed, .invalidArgument: return imaging.description
        }
    }

    /// The record's spine crop: its box, or the whole photo when the box is missing or invalid;
    /// nil when no photo is available.
    /// - Throws: ``ImagingError`` for a photo that cannot be decoded, ``StoreError`` for a copy that cannot be read.
    public func crop(of record: BookRecord, maxEdge: Int = 800) async throws -> SpineCrop? {
        guard let photo = try await photo(of: record) else { return nil }
        let box = record.scan?.boundingBox.map { NormalizedBox(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
            ?? NormalizedBox(x: 0, y: 0, width: 1, height: 1)
        return try SpineCropper().crops(photo: photo.bytes, file: photo.name, boxes: [box], maxEdge: maxEdge).first
    }

    /// Marks records verified, then cleans up photos.
    /// - Returns: Notes to print: a verified detection that stays queued as an uncertain match
    ///   (what to type next), and warnings (failed photo deletes).
    /// - Throws: ``ReviewError/uncertainMatch(id:candidates:)`` for an uncertain match that is not
    ///   an unsure detection (nothing is written), ``ReviewError/unknownID(_:)``, ``StoreError``.
    @discardableResult
    public func verify(ids: [String]) async throws -> [String] {
        let notes = try await store.verify(ids: ids).filter { $0.status == .needsCandidateSelection }.map {
            "\($0.id) stays in the queue as an uncertain match: choose its candidate with "
                + "`bookpipe review choose \($0.id) N`, or `--none`."
        }
        return notes + (await cleanUp())
    }

    /// Verifies every scan detection in the queue, then cleans up photos.
    /// - Returns: How many were verified, and warnings.
    public func verifyAll() async throws -> (count: Int, warnings: [String]) {
        let ids = try await store.reviewQueueEntries(kind: .scan).map(\.id)
        guard !ids.isEmpty else { return (0, []) }
        return (ids.count, try await verify(ids: ids))
    }

    /// Edits title and/or authors (locked against enrichment), then cleans up photos.
    @discardableResult
    public func edit(id: String, title: String?, authors: [String]?) async throws -> (BookRecord, [String]) {
        let record = try await store.edit(id: id, title: title, authors: authors)
        return (record, await cleanUp())
    }

    /// Why choosing candidate `number` of item `id` needs the person to confirm first
    /// (``ReviewRules/authorDisagreement(choosing:for:)``), or nil. An unknown id or a number out of
    /// range is nil here: ``choose(id:candidate:)`` reports those.
    public func confirmationNeeded(id: String, candidate number: Int) async throws(StoreError) -> String? {
        guard let record = try await store.reviewItem(id: id)?.record else { return nil }
        let candidates = record.enrichment?.candidates ?? []
        guard number >= 1, number <= candidates.count else { return nil }
        return ReviewRules.authorDisagreement(choosing: candidates[number - 1], for: record)
    }

    /// Chooses candidate `number` (1-based), or none, then cleans up photos.
    @discardableResult
    public func choose(id: String, candidate number: Int?) async throws -> (BookRecord, [String]) {
        let record: BookRecord
        if let number {
            record = try await store.choose(id: id, candidate: number)
        } else {
            record = try await store.chooseNone(id: id)
        }
        return (record, await cleanUp())
    }

    /// Deletes managed photos whose detections are all reviewed and looked up (``PhotoCleanupRules``).
    /// - Returns: Warnings for deletes that failed (retried next time).
    public func cleanUp() async -> [String] {
        do {
            return try await store.cleanUpReviewedPhotos().failures.map { "warning: \($0)" }
        } catch {
            return ["warning: photo cleanup: \(error.description)"]
        }
    }
}

/// One line of `review list` (and one object of `review list --json`).
public struct ReviewListEntry: Sendable, Hashable, Codable {
    /// The record id.
    public var id: String
    /// `scan` or `match`.
    public var kind: ReviewKind
    /// The title as read (or edited).
    public var title: String
    /// The authors.
    public var authors: [String]
    /// The detector's confidence, when it gave one.
    public var confidence: Double?
    /// Whether a photo is available for a crop.
    public var photo: Bool
    /// The normalised box, when the detection had one.
    public var boundingBox: BoundingBox?
    /// When the record's file was imported (ISO 8601).
    public var createdAt: String

    /// The entry of a queued item, as the list reads it.
    public init(_ entry: ReviewQueueEntry, photoAvailable: Bool) {
        id = entry.id
        kind = entry.kind
        title = entry.title
        authors = entry.authors
        confidence = entry.confidence
        photo = photoAvailable
        boundingBox = entry.boundingBox
        createdAt = entry.createdAt
    }

    /// The entry of a fully decoded queued item (what the list showed before it read only its
    /// columns; the tests compare the two).
    public init(_ item: ReviewItem, photoAvailable: Bool) {
        id = item.id
        kind = item.kind ?? .scan
        title = item.record.title
        authors = item.record.authors
        confidence = item.record.scan?.confidence
        photo = photoAvailable
        boundingBox = item.record.scan?.boundingBox
        createdAt = item.createdAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, kind, title, authors, confidence, photo, boundingBox, createdAt
    }

    /// Encodes every key, null included (`confidence` and `boundingBox` may be null).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(kind, forKey: .kind)
        try container.encode(title, forKey: .title)
        try container.encode(authors, forKey: .authors)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(photo, forKey: .photo)
        try container.encode(boundingBox, forKey: .boundingBox)
        try container.encode(createdAt, forKey: .createdAt)
    }
}
