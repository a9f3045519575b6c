import BookpipeCore
import BookpipeLibrary
import Foundation

/// Managed photo copies in the database (docs/decisions/0031): a row of `photos` per copy, its
/// JPEG as `bytea`, written in the transaction that inserts the first detections naming it and
/// deleted in the transaction that finds every detection of it settled. Every machine that
/// reaches the library reaches its photos, and `pg_dump` backs them up with the rows.
extension PostgresLibrary {
    /// The prefix of a detection's stored photo path on PostgreSQL: `postgres:photos/<name>`.
    static let photoReferencePrefix = "postgres:photos/"

    /// Reads and checks the photo, and keeps the prepared copy until the records naming it are
    /// inserted (``submitInsert(_:runID:)`` writes it in their transaction). A copy already stored,
    /// or already waiting, is not prepared again.
    public func storeScanPhoto(at photoPath: String, scanFolder: String, scan: String,
                               prepare: (_ bytes: [UInt8], _ name: String) throws -> [UInt8],
                               validate: (_ bytes: [UInt8], _ name: String) throws -> Void) async throws(ManagedPhotoError)
        -> ManagedPhoto {
        let (name, bytes) = try ManagedPhotos.readScanPhoto(at: photoPath, scanFolder: scanFolder, scan: scan,
                                                            maxPhotoBytes: ManagedPhotos.defaultMaxPhotoBytes, validate: validate)
        let reference = Self.photoReferencePrefix + name
        if let waiting = pendingPhotos.withLock({ $0[name]?.count }) {
            return ManagedPhoto(name: name, path: reference, byteCount: waiting, wasAlreadyStored: true)
        }
        // A library that cannot be asked now is asked again by the insert (ON CONFLICT DO NOTHING).
        if let stored = try? withConnection("photo \(name)", { connection in
            try connection.execute("SELECT octet_length(jpeg) FROM photos WHERE name = $1", [name], what: "photo \(name)",
                                   reading: true).scalar
        }), let count = Int(stored) {
            return ManagedPhoto(name: name, path: reference, byteCount: count, wasAlreadyStored: true)
        }
        let copy: [UInt8]
        do {
            copy = try prepare(bytes, photoPath)
        } catch {
            throw ManagedPhotoError(code: .refused, photo: photoPath, scan: scan, detail: "\(error)")
        }
        pendingPhotos.withLock { $0[name] = copy }
        return ManagedPhoto(name: name, path: reference, byteCount: copy.count, wasAlreadyStored: false)
    }

    /// True for `postgres:photos/<name>`.
    public func isManagedPhotoPath(_ path: String) -> Bool {
        path.hasPrefix(Self.photoReferencePrefix)
    }

    /// The copy's bytes, read from `photos`.
    public func scanPhoto(storedAt path: String) async throws(StoreError) -> [UInt8]? {
        guard let name = ManagedPhotos.name(inStoredPath: path) else { return nil }
        return try withConnection("the photo's copy \(name)") { connection in
            try connection.bytes("SELECT jpeg FROM photos WHERE name = $1", [name], what: "the photo's copy \(name)")
        }
    }

    /// The stored paths whose copy is a row of `photos`.
    public func availableScanPhotos(storedAt paths: Set<String>) async throws(StoreError) -> Set<String> {
        var byName: [String: [String]] = [:]
        for path in paths {
            if let name = ManagedPhotos.name(inStoredPath: path) { byName[name, default: []].append(path) }
        }
        guard !byName.isEmpty else { return [] }
        let found = try withConnection("photos") { connection in
            try connection.execute("SELECT name FROM photos WHERE name = ANY($1::text[])", [Self.array(Array(byName.keys))],
                                   what: "photos", reading: true).rows.compactMap { $0[0] }
        }
        return Set(found.flatMap { byName[$0] ?? [] })
    }

    /// The names of the rows of `photos`.
    public func storedPhotoNames() async throws(StoreError) -> [String] {
        try withConnection("photos") { connection in
            try connection.execute("SELECT name FROM photos ORDER BY name", what: "photos", reading: true).rows.compactMap { $0[0] }
        }
    }

    /// Releases the due copies; each is deleted in the transaction that releases it
    /// (``releaseDetectionPhotos(names:isDue:)``), so nothing is left to delete after.
    public func cleanUpReviewedPhotos() async throws(StoreError) -> PhotoCleanup {
        try await PhotoCleanupRules.cleanUp(self, storedNames: try await storedPhotoNames()) { _ throws(ManagedPhotoError) in }
    }

    /// Writes the waiting copies these records name, in the caller's transaction (the one
    /// inserting them); a copy no stored record names is not written. Returns the names written
    /// or found stored, to drop from the waiting copies once the transaction commits.
    func insertPendingPhotos(namedBy records: [BookRecord], _ connection: PostgresConnection) throws -> [String] {
        let names = Set(records.compactMap { record in
            record.scan?.photoPath.flatMap { isManagedPhotoPath($0) ? ManagedPhotos.name(inStoredPath: $0) : nil }
        })
        guard !names.isEmpty else { return [] }
        let waiting = pendingPhotos.withLock { pending in names.compactMap { name in pending[name].map { (name, $0) } } }
        for (name, jpeg) in waiting.sorted(by: { $0.0 < $1.0 }) {
            try connection.execute("""
                INSERT INTO photos (name, byte_count, stored_at, jpeg)
                SELECT $1, $2::integer, $3::float8, $4
                WHERE EXISTS (SELECT 1 FROM records r WHERE r.photo IS NOT NULL AND \(Self.photoName) = $1)
                ON CONFLICT (name) DO NOTHING
                """, [name, String(jpeg.count), Self.text(Date())], bytes: jpeg, what: "photo \(name)")
        }
        return waiting.map(\.0)
    }
}

