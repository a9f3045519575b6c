#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The library's own copies of accepted scan photos, in a folder beside the library
/// (`library.sqlite.photos/`), so that review can crop spines after the user's scan folder has
/// changed, and cleanup can delete a photo without touching the user's original.
///
/// - **Content-addressed.** A copy is named after the SHA-256 of the photo's bytes (`<64 hex>.jpg`),
///   so the same photo imported twice (or from two scan files) is stored once. What is stored may
///   be a lossless re-encode of those bytes (`prepare`; the scan import adds restart markers).
/// - **Atomic.** A copy is written to a temporary file in the folder, flushed, and renamed into
///   place: a killed import leaves either the whole copy or none (and at worst a `.tmp` file).
/// - **Contained.** It reads only a regular file inside the given scan folder (checked again on
///   the real path here, whatever the caller checked) and writes and deletes only inside its own
///   folder; ``delete(named:)`` accepts nothing but the names it gives out.
/// - **Validated first.** The caller's `validate` (and `prepare`) see the bytes before anything is written. The
///   JPEG check lives in `BookpipeImaging`, which this module does not depend on: pass
///   `ImageDecoder().header(of:file:)`, which refuses an empty file, a file that is not a JPEG
///   and a header claiming more than 100 million pixels (60000×60000, say) before allocating any
///   pixel memory. The photo's size is capped before it is read (``maxPhotoBytes``).
///
/// ```swift
/// let photos = ManagedPhotos(libraryPath: "library.sqlite")
/// let decoder = ImageDecoder()
/// let copy = try photos.store(photoAt: resolved.path, scanFolder: resolved.scanFolder, scan: "shelf-1") { bytes, name in
///     _ = try decoder.header(of: bytes, file: name)
/// }
/// // …once every detection of the photo is reviewed:
/// _ = try photos.delete(named: copy.name)
/// ```
public struct ManagedPhotos: Sendable {
    /// The managed folder.
    public let folder: String
    /// The largest photo copied, in bytes (100 MiB by default); larger files are refused unread.
    public var maxPhotoBytes: Int
    /// The largest photo any engine takes in by default: 100 MiB.
    public static let defaultMaxPhotoBytes = 100 << 20

    /// The managed folder of a library: the library's path with `.photos` appended.
    /// - Parameter libraryPath: The library file, as given with `--library`.
    public init(libraryPath: String, maxPhotoBytes: Int = defaultMaxPhotoBytes) {
        self.init(folder: libraryPath + ".photos", maxPhotoBytes: maxPhotoBytes)
    }

    /// A managed folder at an explicit path.
    /// - Parameters:
    ///   - folder: The folder; created on the first copy.
    ///   - maxPhotoBytes: The largest photo copied, in bytes.
    public init(folder: String, maxPhotoBytes: Int = defaultMaxPhotoBytes) {
        self.folder = folder
        self.maxPhotoBytes = maxPhotoBytes
    }

    /// Copies a photo into the managed folder, unless a copy with the same bytes is already there.
    ///
    /// Reads the photo once (without following a symbolic link and without blocking on a FIFO),
    /// hands the bytes to `validate`, then writes the copy atomically. Nothing is written when
    /// any step fails.
    ///
    /// - Parameters:
    ///   - photoPath: The photo, normally `ResolvedScanPhoto.path` from the scan reader.
    ///   - scanFolder: The scan folder the photo must lie in.
    ///   - scan: The scan's name, for messages.
    ///   - prepare: Turns the validated bytes into what is stored, only when no copy of the photo
    ///     is stored yet (the scan import passes `RowRestarts.addingRowRestarts(to:file:)`, a
    ///     lossless re-encode that lets a crop decode only the rows it needs, and that reads every
    ///     coded byte, so a cut-off or damaged photo throws there). The copy keeps the name of the
    ///     photo's own bytes, so the same photo is still stored once. Throws to refuse the photo,
    ///     as `validate` does. By default the bytes as read.
    ///   - validate: Checks the bytes (`ImageDecoder().header(of:file:)`); throws to refuse the
    ///     photo. Receives the bytes and the photo's path for its messages.
    /// - Returns: The managed copy.
    /// - Throws: ``ManagedPhotoError`` saying which photo of which scan, what went wrong and what
    ///   to do: outside the scan folder, missing, not a regular file, empty, too large, refused by
    ///   `validate` or `prepare`, or the managed folder cannot be written.
    public func store(
        photoAt photoPath: String, scanFolder: String, scan: String,
        prepare: (_ bytes: [UInt8], _ name: String) throws -> [UInt8] = { bytes, _ in bytes },
        validate: (_ bytes: [UInt8], _ name: String) throws -> Void
    ) throws(ManagedPhotoError) -> ManagedPhoto {
        func failure(_ code: ManagedPhotoError.Code, _ detail: String = "") -> ManagedPhotoError {
            ManagedPhotoError(code: code, photo: photoPath, scan: scan, detail: detail)
        }
        let (name, bytes) = try Self.readScanPhoto(at: photoPath, scanFolder: scanFolder, scan: scan,
                                                   maxPhotoBytes: maxPhotoBytes, validate: validate)
        let target = folder + "/" + name
        var existing = stat()
        // A copy bookpipe wrote is whole (written, then renamed) and ends a JPEG (EOI), in whatever
        // form `prepare` gave it; anything else under the name (half written by someone else) is replaced.
        if lstat(target, &existing) == 0, existing.st_mode & S_IFMT == S_IFREG,
           Int(existing.st_size) == bytes.count || Self.endsWithJPEGEnd(target, size: Int(existing.st_size)) {
            return ManagedPhoto(name: name, path: target, byteCount: Int(existing.st_size), wasAlreadyStored: true)
        }
        let stored: [UInt8]
        do {
            stored = try prepare(bytes, photoPath)
        } catch {
            throw failure(.refused, "\(error)")
        }
        try makeFolder(failure: failure)
        try writeAtomically(stored, to: target, name: name, failure: failure)
        return ManagedPhoto(name: name, path: target, byteCount: stored.count, wasAlreadyStored: false)
    }

    /// Reads a scan photo the way every engine takes one in: only a regular file inside the scan
    /// folder (checked on the real path), without following a symbolic link or blocking on a FIFO,
    /// at most `maxPhotoBytes`, checked by `validate`. Writes nothing.
    ///
    /// - Parameters:
    ///   - photoPath: The photo, normally `ResolvedScanPhoto.path` from the scan reader.
    ///   - scanFolder: The scan folder the photo must lie in.
    ///   - scan: The scan's name, for messages.
    ///   - maxPhotoBytes: The largest photo read; a larger file is refused unread.
    ///   - validate: Checks the bytes (`ImageDecoder().header(of:file:)`); throws to refuse the photo.
    /// - Returns: The name a managed copy of these bytes gets (`<SHA-256 hex>.jpg`) and the bytes.
    /// - Throws: ``ManagedPhotoError``: outside the scan folder, missing, not a regular file, empty,
    ///   too large, unreadable, or refused by `validate`.
    public static func readScanPhoto(
        at photoPath: String, scanFolder: String, scan: String, maxPhotoBytes: Int,
        validate: (_ bytes: [UInt8], _ name: String) throws -> Void
    ) throws(ManagedPhotoError) -> (name: String, bytes: [UInt8]) {
        func failure(_ code: ManagedPhotoError.Code, _ detail: String = "") -> ManagedPhotoError {
            ManagedPhotoError(code: code, photo: photoPath, scan: scan, detail: detail)
        }
        guard !photoPath.utf8.contains(0), !scanFolder.utf8.contains(0) else { throw failure(.outsideScanFolder) }
        guard let realFolder = Self.realPath(scanFolder) else {
            throw failure(.unreadable, "the scan folder \(scanFolder): " + Self.systemMessage(errno))
        }
        guard let realPhoto = Self.realPath(photoPath) else {
            let code = errno
            throw code == ENOENT || code == ENOTDIR ? failure(.missing) : failure(.unreadable, Self.systemMessage(code))
        }
        let prefix = realFolder.hasSuffix("/") ? realFolder : realFolder + "/"
        guard realPhoto.hasPrefix(prefix), realPhoto.count > prefix.count else {
            throw failure(.outsideScanFolder, realPhoto)
        }
        let bytes = try readFile(realPhoto, maxBytes: maxPhotoBytes, failure: failure)
        do {
            try validate(bytes, photoPath)
        } catch {
            throw failure(.refused, "\(error)")
        }
        return (SHA256.hex(bytes) + ".jpg", bytes)
    }

    /// The path of a managed copy, or nil when `name` is not a name this folder gives out.
    /// - Parameter name: A ``ManagedPhoto/name``.
    /// - Returns: The copy's path (whether or not it still exists).
    public func path(named name: String) -> String? {
        Self.isManagedName(name) ? folder + "/" + name : nil
    }

    /// Deletes a managed copy. Idempotent: a copy that is already gone is reported as such.
    ///
    /// Only a name this folder gives out (`<64 hex>.jpg`) is accepted, so no path can reach a
    /// file outside the managed folder.
    ///
    /// - Parameter name: A ``ManagedPhoto/name``.
    /// - Returns: ``ManagedPhotoDeletion/deleted`` or ``ManagedPhotoDeletion/alreadyAbsent``.
    /// - Throws: ``ManagedPhotoError`` `.invalidName` for any other name, `.deleteFailed` with
    ///   the system's reason when the file exists but cannot be deleted (log it and retry later).
    public func delete(named name: String) throws(ManagedPhotoError) -> ManagedPhotoDeletion {
        guard let path = path(named: name) else {
            throw ManagedPhotoError(code: .invalidName, photo: name, scan: nil, detail: "")
        }
        if unlink(path) == 0 { return .deleted }
        let code = errno
        if code == ENOENT { return .alreadyAbsent }
        throw ManagedPhotoError(code: .deleteFailed, photo: path, scan: nil, detail: Self.systemMessage(code))
    }

    /// The names of the managed copies present, sorted (temporary files left by a killed copy are
    /// not listed).
    /// - Returns: The names; empty when the folder does not exist yet.
    /// - Throws: ``ManagedPhotoError`` `.folderUnusable` when the folder exists but cannot be read.
    public func storedNames() throws(ManagedPhotoError) -> [String] {
        guard let directory = opendir(folder) else {
            let code = errno
            if code == ENOENT { return [] }
            throw ManagedPhotoError(code: .folderUnusable, photo: folder, scan: nil, detail: Self.systemMessage(code))
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if Self.isManagedName(name) { names.append(name) }
        }
        return names.sorted()
    }

    // MARK: Steps

    private static func readFile(
        _ path: String, maxBytes maxPhotoBytes: Int, failure: (ManagedPhotoError.Code, String) -> ManagedPhotoError
    ) throws(ManagedPhotoError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw code == ELOOP ? failure(.outsideScanFolder, "it became a symbolic link") : failure(.unreadable, Self.systemMessage(code))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(.unreadable, Self.systemMessage(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure(.notRegularFile, "") }
        let size = Int(info.st_size)
        if size == 0 { throw failure(.emptyFile, "") }
        if size > maxPhotoBytes { throw failure(.tooLarge, "\(size) bytes; the limit is \(maxPhotoBytes)") }
        var bytes = [UInt8](repeating: 0, count: size)
        var total = 0
        while total < size {
            let count = bytes.withUnsafeMutableBytes { raw in
                systemRead(descriptor, raw.baseAddress! + total, size - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(.unreadable, Self.systemMessage(errno))
            }
            if count == 0 { break }
            total += count
        }
        if total == 0 { throw failure(.emptyFile, "") }
        return total == size ? bytes : Array(bytes[0..<total])
    }

    private func makeFolder(failure: (ManagedPhotoError.Code, String) -> ManagedPhotoError) throws(ManagedPhotoError) {
        if mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw failure(.folderUnusable, "\(folder): " + Self.systemMessage(errno))
        }
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw failure(.folderUnusable, "\(folder) is not a folder")
        }
    }

    private func writeAtomically(
        _ bytes: [UInt8], to target: String, name: String, failure: (ManagedPhotoError.Code, String) -> ManagedPhotoError
    ) throws(ManagedPhotoError) {
        let temporary = folder + "/." + name + "." + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(.folderUnusable, "\(folder): " + Self.systemMessage(errno)) }
        var problem: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let count = write(descriptor, raw.baseAddress! + written, raw.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    problem = errno
                    return
                }
                written += count
            }
        }
        if problem == 0 && fsync(descriptor) != 0 { problem = errno }
        if close(descriptor) != 0 && problem == 0 { problem = errno }
        if problem == 0 && rename(temporary, target) != 0 { problem = errno }
        if problem != 0 {
            unlink(temporary)
            throw failure(.folderUnusable, "\(folder): " + Self.systemMessage(problem))
        }
        // Make the rename itself durable (best effort: some file systems refuse fsync on folders).
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// True when the file's last two bytes are a JPEG's end-of-image marker (FF D9).
    static func endsWithJPEGEnd(_ path: String, size: Int) -> Bool {
        guard size >= 4 else { return false }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var end: (UInt8, UInt8) = (0, 0)
        let count = withUnsafeMutableBytes(of: &end) { pread(descriptor, $0.baseAddress, 2, off_t(size - 2)) }
        return count == 2 && end == (0xFF, 0xD9)
    }

    static func isManagedName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count == 68, name.hasSuffix(".jpg") else { return false }
        return utf8[0..<64].allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f")) }
    }

    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// A photo copy in the managed folder.
public struct ManagedPhoto: Sendable, Hashable {
    /// The copy's name in the managed folder: the SHA-256 of the photo's bytes (as read, before
    /// `prepare`) and `.jpg`.
    public let name: String
    /// The copy's path.
    public let path: String
    /// Its size in bytes.
    public let byteCount: Int
    /// True when a copy with the same bytes was already there (nothing was written).
    public let wasAlreadyStored: Bool

    /// Creates a value describing a copy.
    public init(name: String, path: String, byteCount: Int, wasAlreadyStored: Bool) {
        self.name = name
        self.path = path
        self.byteCount = byteCount
        self.wasAlreadyStored = wasAlreadyStored
    }
}

/// What ``ManagedPhotos/delete(named:)`` did.
public enum ManagedPhotoDeletion: Sendable, Hashable {
    /// The copy was deleted.
    case deleted
    /// There was no copy to delete (deleted before, or never stored).
    case alreadyAbsent
}

/// A photo that could not be copied into, or deleted from, the managed folder.
public struct ManagedPhotoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable {
        /// The photo is not inside the scan folder (on its real path).
        case outsideScanFolder
        /// The photo does not exist.
        case missing
        /// The photo cannot be read.
        case unreadable
        /// The photo is a folder, a FIFO, a device or a socket.
        case notRegularFile
        /// The photo has no bytes.
        case emptyFile
        /// The photo is larger than ``ManagedPhotos/maxPhotoBytes``.
        case tooLarge
        /// The validation (the JPEG check) refused the bytes.
        case refused
        /// The managed folder cannot be created or written.
        case folderUnusable
        /// A name that the managed folder does not give out.
        case invalidName
        /// Deleting a copy failed.
        case deleteFailed
    }

    /// What went wrong.
    public let code: Code
    /// The photo (or managed copy, or name) concerned.
    public let photo: String
    /// The scan the photo belongs to, when known.
    public let scan: String?
    /// The underlying reason (the system's message, the validator's message, …).
    public let detail: String

    /// Creates an error.
    public init(code: Code, photo: String, scan: String?, detail: String) {
        self.code = code
        self.photo = photo
        self.scan = scan
        self.detail = detail
    }

    /// The message for people: which photo of which scan, what went wrong, and what next.
    public var description: String {
        let whose = scan.map { "scan \"\($0)\": photo \(photo)" } ?? "photo \(photo)"
        let suffix = detail.isEmpty ? "" : " (\(detail))"
        let textOnly = " The scan's detections can still be reviewed as text."
        switch code {
        case .outsideScanFolder:
            return "\(whose): not inside the scan folder\(suffix); it was not copied." + textOnly
        case .missing:
            return "\(whose): the file does not exist; nothing was copied. Put the photo next to the scan file and import again."
        case .unreadable:
            return "\(whose): cannot read the file\(suffix). Check its permissions and import again."
        case .notRegularFile:
            return "\(whose): not a regular file (a folder, pipe or device); it was not opened." + textOnly
        case .emptyFile:
            return "\(whose): the file is empty (0 bytes). Copy the photo again and import again."
        case .tooLarge:
            return "\(whose): the file is too large\(suffix); it was not read." + textOnly
        case .refused:
            return "\(whose): refused: \(detail)" + (detail.hasSuffix(".") ? "" : ".") + textOnly
        case .folderUnusable:
            return "\(whose): cannot write the library's photo folder\(suffix). Check the disk and the folder's permissions."
        case .invalidName:
            return "\"\(photo)\" is not the name of a managed photo copy (64 hex digits and .jpg); nothing was deleted."
        case .deleteFailed:
            return "\(whose): deleting the managed copy failed\(suffix). It is kept; the next run tries again."
        }
    }
}

@inline(__always) private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
