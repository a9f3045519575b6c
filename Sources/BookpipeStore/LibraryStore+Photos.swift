import BookpipeLibrary
import Foundation

/// The SQLite engine keeps its managed photo copies as files in `<library>.photos/`
/// (``ManagedPhotos``, docs/decisions/0013): the contract's photo requirements over that folder.
extension LibraryStore {
    /// The library's managed photo folder.
    public var managedPhotos: ManagedPhotos { ManagedPhotos(libraryPath: path) }

    /// Copies the photo into the managed folder now (atomically), unless the same bytes are there.
    public func storeScanPhoto(at photoPath: String, scanFolder: String, scan: String,
                               prepare: (_ bytes: [UInt8], _ name: String) throws -> [UInt8],
                               validate: (_ bytes: [UInt8], _ name: String) throws -> Void) async throws(ManagedPhotoError)
        -> ManagedPhoto {
        try managedPhotos.store(photoAt: photoPath, scanFolder: scanFolder, scan: scan, prepare: prepare, validate: validate)
    }

    /// True for a path inside the managed folder.
    public func isManagedPhotoPath(_ path: String) -> Bool {
        path.hasPrefix(managedPhotos.folder + "/")
    }

    /// The copy's file, read whole; nil when it is not there. A stored path that names no managed
    /// copy (a library from before managed copies kept the photo's own path) is read as it is.
    public func scanPhoto(storedAt path: String) async throws(StoreError) -> [UInt8]? {
        guard let file = Self.photoFile(storedAt: path, in: managedPhotos),
              FileManager.default.isReadableFile(atPath: file) else { return nil }
        do {
            return Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch {
            throw StoreError.readFailed(path: self.path, what: "the photo's copy \(path)", reason: "\(error.localizedDescription)")
        }
    }

    /// The stored paths whose file is there to read.
    public func availableScanPhotos(storedAt paths: Set<String>) async throws(StoreError) -> Set<String> {
        let photos = managedPhotos
        return paths.filter { stored in
            Self.photoFile(storedAt: stored, in: photos).map(FileManager.default.isReadableFile(atPath:)) ?? false
        }
    }

    /// The file a detection's stored photo path names: its copy in the managed folder, or the path
    /// itself when it names no managed copy.
    static func photoFile(storedAt path: String, in photos: ManagedPhotos) -> String? {
        guard let name = ManagedPhotos.name(inStoredPath: path) else { return path.isEmpty ? nil : path }
        return photos.path(named: name)
    }

    /// The files in the managed folder.
    public func storedPhotoNames() async throws(StoreError) -> [String] {
        (try? managedPhotos.storedNames()) ?? []
    }

    /// Releases the due copies, then deletes their files (a failed delete is retried next time).
    public func cleanUpReviewedPhotos() async throws(StoreError) -> PhotoCleanup {
        try await PhotoCleanupRules.cleanUp(self, photos: managedPhotos)
    }
}
