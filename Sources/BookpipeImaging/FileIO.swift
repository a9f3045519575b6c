#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes whole files with POSIX calls, so the imaging core (and the `image`
/// commands) need no Foundation.
public enum FileIO {
    /// Reads the whole file at `path`.
    ///
    /// - Throws: ``ImagingError`` `.unreadableFile` with the system's reason.
    public static func read(_ path: String) throws(ImagingError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 { throw ImagingError(.unreadableFile, file: path, detail: systemMessage(errno)) }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) != 0 {
            throw ImagingError(.unreadableFile, file: path, detail: systemMessage(errno))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw ImagingError(.unreadableFile, file: path, detail: "it is a directory")
        }
        var result: [UInt8] = []
        var chunk = max(Int(info.st_size), 0) + 1
        while true {
            var failure: Int32 = 0
            let piece = [UInt8](unsafeUninitializedCapacity: chunk) { buffer, initialized in
                initialized = 0
                guard let base = buffer.baseAddress else { return }
                while initialized < chunk {
                    let got = posixRead(descriptor, base + initialized, chunk - initialized)
                    if got < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if got == 0 { return }
                    initialized += got
                }
            }
            if failure != 0 {
                throw ImagingError(.unreadableFile, file: path, detail: systemMessage(failure))
            }
            if result.isEmpty { result = piece } else { result.append(contentsOf: piece) }
            if piece.count < chunk { return result }
            chunk = max(chunk, 1 << 16)
        }
    }

    /// Writes `bytes` to a new file at `path`, or replaces the file there when `replacing` is true.
    ///
    /// A replacement is written under a temporary name in the same folder and renamed over `path`
    /// once complete, so `path` never holds half an image and a link at `path` is replaced, never
    /// written through (another name of the same file keeps its bytes). Without `replacing`, the
    /// file is created only if nothing is at `path` (checked and created in one step: `O_EXCL`).
    ///
    /// - Parameters:
    ///   - bytes: The file's contents.
    ///   - path: Where to write.
    ///   - replacing: Whether a file already at `path` may be replaced (default: true).
    /// - Throws: ``ImagingError`` `.outputExists` when something is at `path` and `replacing` is
    ///   false; `.unwritableFile` with the system's reason otherwise.
    public static func write(_ bytes: [UInt8], to path: String, replacing: Bool = true) throws(ImagingError) {
        guard replacing else {
            let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if descriptor < 0 {
                let code = errno
                throw ImagingError(code == EEXIST ? .outputExists : .unwritableFile, file: path,
                                   detail: code == EEXIST ? "" : systemMessage(code))
            }
            if let failure = writeAll(bytes, to: descriptor) {
                unlink(path)
                throw ImagingError(.unwritableFile, file: path, detail: systemMessage(failure))
            }
            return
        }
        let temporary = path + ".bookpipe-\(getpid()).partial"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw ImagingError(.unwritableFile, file: path, detail: systemMessage(errno)) }
        var failure = writeAll(bytes, to: descriptor)
        if failure == nil && rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw ImagingError(.unwritableFile, file: path, detail: systemMessage(failure))
        }
    }

    /// Writes every byte to `descriptor` and closes it; the `errno` of the first failure, or nil.
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        var failure: Int32 = 0
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = posixWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        return failure == 0 ? nil : failure
    }

    /// The identity of the file at `path` (links followed), or nil when there is none.
    ///
    /// Two paths name the same file, whether by the same name, a hard link or a symbolic link,
    /// exactly when their identities are equal.
    public static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Whether anything is at `path`: a file, a folder, or a link (even one pointing nowhere).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The names of the entries in the folder at `path` (without `.` and `..`), in no particular
    /// order; empty when there is no such folder.
    public static func names(inFolder path: String) -> [String] {
        guard let folder = opendir(path) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the file at `path` (a link is removed, not what it points to).
    ///
    /// - Throws: ``ImagingError`` `.unwritableFile` with the system's reason.
    public static func remove(_ path: String) throws(ImagingError) {
        if unlink(path) != 0 { throw ImagingError(.unwritableFile, file: path, detail: systemMessage(errno)) }
    }

    /// Creates the folder `path` and any missing parents (like `mkdir -p`).
    ///
    /// - Throws: ``ImagingError`` `.unwritableFile` with the system's reason.
    public static func makeDirectory(_ path: String) throws(ImagingError) {
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { return }
            throw ImagingError(.unwritableFile, file: path, detail: "it exists and is not a folder")
        }
        var prefix = ""
        for (index, part) in path.split(separator: "/", omittingEmptySubsequences: false).enumerated() {
            prefix += (index == 0 ? "" : "/") + part
            if part.isEmpty || part == "." || part == ".." { continue }
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw ImagingError(.unwritableFile, file: path, detail: systemMessage(errno))
            }
        }
        if stat(path, &info) != 0 || (info.st_mode & S_IFMT) != S_IFDIR {
            throw ImagingError(.unwritableFile, file: path, detail: "it is not a folder")
        }
    }

    private static func systemMessage(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// A file's identity: its device and inode numbers, the same for every name the file has.
public struct FileIdentity: Sendable, Hashable {
    /// The device the file lives on.
    public let device: UInt64
    /// The file's inode number on that device.
    public let inode: UInt64

    /// Creates an identity.
    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

@inline(__always) private func posixRead(_ fd: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int {
    read(fd, buffer, count)
}

@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(fd, buffer, count)
}
