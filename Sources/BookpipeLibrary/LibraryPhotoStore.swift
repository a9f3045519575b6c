/// The library's managed copies of scan photos: taken in by the scan import, read by review to cut
/// spine crops, and let go by the clean-up once every detection naming one is settled
/// (``PhotoCleanupRules``). Each engine keeps them its own way (docs/decisions/0031):
///
/// - SQLite: files in a folder beside the library (``ManagedPhotos``, `<library>.photos/`),
///   written before the detections that name them;
/// - PostgreSQL: rows of the database, written in the transaction that inserts the first
///   detection naming the copy, so every machine that reaches the library reaches its photos.
///
/// A detection keeps the reference ``ManagedPhoto/path`` as its ``ScanDetection/photoPath``; its last
/// 68 characters are the copy's name (`<SHA-256 of the photo's bytes>.jpg`), so the same photo is
/// stored once whichever scan names it.
///
/// ```swift
/// let copy = try await library.storeScanPhoto(at: path, scanFolder: folder, scan: "shelf-1",
///                                              prepare: { bytes, _ in bytes },
///                                              validate: { bytes, name in _ = try ImageDecoder().header(of: bytes, file: name) })
/// let jpeg = try await library.scanPhoto(storedAt: copy.path)
/// ```
public protocol LibraryPhotoStore: Sendable {
    /// Takes a scan photo into the library, unless a copy of the same bytes is there already.
    ///
    /// Reads the photo once (``ManagedPhotos/readScanPhoto(at:scanFolder:scan:maxPhotoBytes:validate:)``:
    /// only a regular file inside `scanFolder`), hands the bytes to `validate`, and, when no copy
    /// is stored, keeps what `prepare` makes of them. SQLite writes the file now (atomically);
    /// PostgreSQL keeps the copy until the records naming it are inserted
    /// (``LibraryRecordStore/submitInsert(_:runID:)``) and writes it in their transaction, so a
    /// killed import leaves both or neither.
    /// - Parameters:
    ///   - photoPath: The photo, as the scan reader resolved it.
    ///   - scanFolder: The folder the photo must lie in.
    ///   - scan: The scan's name, for messages.
    ///   - prepare: Turns the validated bytes into what is stored (a lossless re-encode with
    ///     restart markers, docs/decisions/0013); throws to refuse the photo.
    ///   - validate: Checks the bytes; throws to refuse the photo.
    /// - Returns: The copy; its ``ManagedPhoto/path`` is what the detections keep.
    /// - Throws: ``ManagedPhotoError`` saying which photo of which scan and what went wrong.
    func storeScanPhoto(at photoPath: String, scanFolder: String, scan: String,
                        prepare: (_ bytes: [UInt8], _ name: String) throws -> [UInt8],
                        validate: (_ bytes: [UInt8], _ name: String) throws -> Void) async throws(ManagedPhotoError)
        -> ManagedPhoto
    /// True when `path` is a reference this library gives its managed copies (not the user's photo).
    func isManagedPhotoPath(_ path: String) -> Bool
    /// The bytes of the managed copy a detection names (its stored photo path); nil when the copy is
    /// gone (deleted by the clean-up, or never stored).
    /// - Throws: ``StoreError`` when the copy is there but cannot be read.
    func scanPhoto(storedAt path: String) async throws(StoreError) -> [UInt8]?
    /// Of these stored photo paths, those whose managed copy is there (one question for all).
    func availableScanPhotos(storedAt paths: Set<String>) async throws(StoreError) -> Set<String>
    /// The names of the managed copies stored, sorted.
    func storedPhotoNames() async throws(StoreError) -> [String]
    /// Deletes the managed copies whose detections are all settled (``PhotoCleanupRules/isDue(_:)``)
    /// and clears those detections' photo path and box. PostgreSQL deletes each copy in the
    /// transaction that finds it due; SQLite deletes the files after, retrying failed deletes later.
    /// - Returns: What was deleted and what failed (log it).
    func cleanUpReviewedPhotos() async throws(StoreError) -> PhotoCleanup
}

extension ManagedPhotos {
    /// The copy's name a stored photo path names: its last 68 characters when they are a name a
    /// managed copy gets (`<64 hex>.jpg`), else nil.
    public static func name(inStoredPath path: String) -> String? {
        let name = String(path.suffix(68))
        return isManagedName(name) ? name : nil
    }
}
