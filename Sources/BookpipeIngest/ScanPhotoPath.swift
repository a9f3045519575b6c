#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A scan's photo, resolved to a regular file inside the scan folder.
public struct ResolvedScanPhoto: Sendable, Hashable {
    /// The photo's real path: absolute, without symbolic links, inside ``scanFolder``.
    public let path: String
    /// The scan folder's real path (the folder of the scan result file).
    public let scanFolder: String
    /// The path as the scan result file (or `--photo`) gave it.
    public let given: String

    /// Creates a resolved photo (``ScanPhotoPath/resolve(_:scanFolder:scan:file:relativeTo:)`` is
    /// the way to get one that was checked).
    public init(path: String, scanFolder: String, given: String) {
        self.path = path
        self.scanFolder = scanFolder
        self.given = given
    }
}

/// Resolves a scan's photo path so that bookpipe never opens a file outside the scan folder.
///
/// The photo must be a regular file inside the folder of the scan result file. Refused, each with
/// a message naming the scan: an empty path, a NUL byte, `file://` and other URLs, Windows drive
/// and network paths (`C:\…`, `\\server\…`), absolute paths elsewhere, `..` that leaves the folder
/// (with `/` or Windows `\` separators: a `\` is read as a separator), symbolic links that lead
/// outside (checked on the real path, after `realpath`), a missing file, and anything that is not
/// a regular file (a folder, a FIFO, a socket, a device).
///
/// `.` and `..` are applied to the text first (`photos/../shelf.jpg` is `shelf.jpg`), so a `..`
/// after a symbolic link never climbs out of the link's target; then the result is resolved with
/// `realpath` and must still lie inside the scan folder's real path.
///
/// ```swift
/// let photo = try ScanPhotoPath.resolve("photos/shelf.jpg", scanFolder: "scans", scan: "scan-1", file: "scans/scan.json")
/// photo.path   // "/home/me/scans/photos/shelf.jpg"
/// ```
public enum ScanPhotoPath {
    /// Resolves and checks a photo path.
    ///
    /// - Parameters:
    ///   - given: The path as written in the scan result file, or as given with `--photo`.
    ///   - scanFolder: The folder of the scan result file (relative paths are taken from the
    ///     current directory).
    ///   - scan: The scan's name for messages (its `scanId`, or the file name for a bare list).
    ///   - file: The scan result file as given, for messages.
    ///   - base: The folder a relative `given` is relative to: nil for the scan folder (paths
    ///     written in the file), the current directory for a path typed on the command line.
    /// - Returns: The photo's real path inside the scan folder's real path.
    /// - Throws: ``ScanPhotoError`` saying why the path is refused; nothing is opened.
    public static func resolve(
        _ given: String, scanFolder: String, scan: String, file: String, relativeTo base: String? = nil
    ) throws(ScanPhotoError) -> ResolvedScanPhoto {
        func refuse(_ reason: ScanPhotoError.Reason) -> ScanPhotoError {
            ScanPhotoError(reason: reason, scan: scan, file: file, given: given, scanFolder: scanFolder)
        }
        if given.isEmpty { throw refuse(.empty) }
        if given.utf8.contains(0) { throw refuse(.containsNUL) }
        if let scheme = urlScheme(of: given) { throw refuse(.url(scheme: scheme)) }
        if isWindowsAbsolute(given) { throw refuse(.windowsAbsolute) }
        let usesBackslashes = given.contains("\\")
        let path = usesBackslashes ? given.replacingBackslashes() : given

        let folder = normalized(absolute(scanFolder))
        guard let realFolder = realPath(folder) else { throw refuse(.folderUnusable(systemMessage(errno))) }
        let candidate = path.hasPrefix("/") ? normalized(path) : normalized(absolute(base ?? folder) + "/" + path)
        guard isInside(candidate, folder) || isInside(candidate, realFolder) else {
            if path.hasPrefix("/") { throw refuse(.absoluteOutside) }
            if candidate == folder || candidate == realFolder { throw refuse(.notRegularFile(kind: "the scan folder itself")) }
            // Only a `..` leads out of the folder a relative path starts in; a path typed on the
            // command line starts in the current directory, which may be outside the scan folder.
            let start = normalized(absolute(base ?? folder))
            let startsInScanFolder = start == folder || start == realFolder || isInside(start, folder) || isInside(start, realFolder)
            throw refuse(startsInScanFolder ? .leavesFolder(windowsSeparators: usesBackslashes)
                                            : .outsideFromCurrentDirectory(resolved: candidate))
        }
        guard let real = realPath(candidate) else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { throw refuse(.notFound) }
            if code == ELOOP { throw refuse(.unreadable("a loop of symbolic links")) }
            throw refuse(.unreadable(systemMessage(code)))
        }
        guard isInside(real, realFolder) else { throw refuse(.symlinkOutside(target: real)) }
        var info = stat()
        guard stat(real, &info) == 0 else { throw refuse(.unreadable(systemMessage(errno))) }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else { throw refuse(.notRegularFile(kind: kindName(type))) }
        return ResolvedScanPhoto(path: real, scanFolder: realFolder, given: given)
    }

    /// The URL scheme a path starts with (`file`, `https`), or nil.
    static func urlScheme(of path: String) -> String? {
        let lowered = path.lowercased()
        if lowered.hasPrefix("file:") { return "file" }
        guard let separator = lowered.range(of: "://") else { return nil }
        let scheme = lowered[..<separator.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }) else { return nil }
        return String(scheme)
    }

    /// True for `C:\…`, `C:/…` and `\\server\share\…`.
    static func isWindowsAbsolute(_ path: String) -> Bool {
        let scalars = Array(path.unicodeScalars.prefix(3))
        if scalars.count >= 2, scalars[0] == "\\", scalars[1] == "\\" { return true }
        guard scalars.count >= 3, scalars[0].isASCII, scalars[1] == ":" else { return false }
        return Character(scalars[0]).isLetter && (scalars[2] == "\\" || scalars[2] == "/")
    }

    /// `path` made absolute against the current directory.
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        let directory = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.isEmpty || path == "." ? directory : directory + "/" + path
    }

    /// `.` and `..` segments and repeated slashes removed, without looking at the disk.
    static func normalized(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." {
                if !parts.isEmpty { parts.removeLast() }
                continue
            }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// True when `path` is strictly inside `folder` (both absolute and normalised).
    static func isInside(_ path: String, _ folder: String) -> Bool {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return path.hasPrefix(prefix) && path.count > prefix.count
    }

    /// `realpath(3)`, or nil with `errno` set.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func kindName(_ type: mode_t) -> String {
        switch type {
        case S_IFDIR: "a folder"
        case S_IFIFO: "a named pipe (FIFO)"
        case S_IFSOCK: "a socket"
        case S_IFCHR, S_IFBLK: "a device"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }

    static func systemMessage(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }
}

/// A scan's photo path that bookpipe refuses to use. The scan's detections can still be
/// imported, for text-only review.
public struct ScanPhotoError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the path is refused.
    public enum Reason: Sendable, Hashable {
        /// The path is empty.
        case empty
        /// The path holds a NUL byte (which would cut the path short for the system).
        case containsNUL
        /// The path is a URL (`file://…`, `https://…`).
        case url(scheme: String)
        /// A Windows drive or network path (`C:\…`, `\\server\…`).
        case windowsAbsolute
        /// An absolute path outside the scan folder.
        case absoluteOutside
        /// A relative path whose `..` leaves the scan folder.
        case leavesFolder(windowsSeparators: Bool)
        /// A path typed on the command line (`--photo`), taken from the current directory, that
        /// names a place outside the scan folder (`resolved`), with or without a `..`.
        case outsideFromCurrentDirectory(resolved: String)
        /// The path is, or passes through, a symbolic link that leads outside the scan folder.
        case symlinkOutside(target: String)
        /// No file at the path.
        case notFound
        /// The path names a folder, a FIFO, a socket or a device.
        case notRegularFile(kind: String)
        /// The system refused to resolve the path.
        case unreadable(String)
        /// The scan folder itself cannot be resolved.
        case folderUnusable(String)
    }

    /// Why the path is refused.
    public let reason: Reason
    /// The scan's name (its `scanId`, or the file name for a bare list).
    public let scan: String
    /// The scan result file, as given.
    public let file: String
    /// The photo path as given.
    public let given: String
    /// The scan folder, as given.
    public let scanFolder: String

    /// Creates an error.
    public init(reason: Reason, scan: String, file: String, given: String, scanFolder: String) {
        self.reason = reason
        self.scan = scan
        self.file = file
        self.given = given
        self.scanFolder = scanFolder
    }

    /// The path as given, with a NUL byte shown as `\0` and cut to 200 characters.
    public var displayedPath: String {
        let shown = given.replacingOccurrences(of: "\u{0}", with: "\\0")
        return shown.count > 200 ? String(shown.prefix(200)) + "…" : shown
    }

    /// The message for people: where (file, scan), what, and what next.
    public var description: String {
        let fix = "Put the photo in the scan's folder (\(scanFolder)) and name it relative to that folder."
        let head = "\(file): scan \"\(scan)\": photo \"\(displayedPath)\" refused: "
        switch reason {
        case .empty:
            return head + "the path is empty. " + fix
        case .containsNUL:
            return head + "the path holds a NUL byte. " + fix
        case .url(let scheme):
            return head + "\(scheme):// URLs are not accepted, only file paths. " + fix
        case .windowsAbsolute:
            return head + "a Windows drive or network path is outside the scan folder. " + fix
        case .absoluteOutside:
            return head + "the absolute path is outside the scan folder. " + fix
        case .leavesFolder(let windowsSeparators):
            return head + "'..' leads out of the scan folder"
                + (windowsSeparators ? " (\\ is read as a folder separator)" : "") + ". " + fix
        case .outsideFromCurrentDirectory(let resolved):
            return head + "taken from the current directory (as --photo paths are) it is \(resolved), which is outside "
                + "the scan folder (\(scanFolder)). Put the photo in the scan file's folder and give its path, "
                + "for example --photo \(scanFolder == "." ? "" : scanFolder + "/")shelf.jpg."
        case .symlinkOutside(let target):
            return head + "it is, or passes through, a symbolic link that leads outside the scan folder (to \(target)). "
                + "Copy the photo itself into the scan folder."
        case .notFound:
            return head + "no such file in the scan folder. Check the name, or copy the photo next to the scan file."
        case .notRegularFile(let kind):
            return head + "it is \(kind), not a photo file. Name the JPEG file itself."
        case .unreadable(let reason):
            return head + "the path cannot be resolved (\(reason)). Check the path and its permissions."
        case .folderUnusable(let reason):
            return head + "the scan folder cannot be resolved (\(reason)). Check that it exists and may be read."
        }
    }
}

private extension String {
    func replacingBackslashes() -> String { String(map { $0 == "\\" ? "/" : $0 }) }

    func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
