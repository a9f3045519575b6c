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

    /// Writes `bytes` to `path`, replacing it.
    ///
    /// - Throws: ``ImagingError`` `.unwritableFile` with the system's reason.
    public static func write(_ bytes: [UInt8], to path: String) throws(ImagingError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if descriptor < 0 { throw ImagingError(.unwritableFile, file: path, detail: systemMessage(errno)) }
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
        if failure != 0 {
            throw ImagingError(.unwritableFile, file: path, detail: systemMessage(failure))
        }
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

@inline(__always) private func posixRead(_ fd: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int {
    read(fd, buffer, count)
}

@inline(__always) private func posixWrite(_ fd: Int32, _ buffer: UnsafePointer<UInt8>, _ count: Int) -> Int {
    write(fd, buffer, count)
}
