import BookpipeEnrichment
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a dump file line by line in bounded memory: a plain text file, or a gzip file streamed
/// through `gzip -dc` (Foundation on Linux has no zlib stream API).
///
/// Memory stays at about one read chunk plus the longest line, whatever the file's size. A line
/// longer than ``maximumLineLength`` is returned as ``Line/isTruncated`` (its start only) and the
/// rest of it is discarded, so one corrupt giant line cannot exhaust memory.
///
/// Not thread-safe: one reader is used by one import at a time.
final class DumpLineReader {
    /// One line without its line break (a trailing `\r` is removed too).
    struct Line {
        /// 1-based physical line number.
        var number: Int
        /// The bytes (at most ``DumpLineReader/maximumLineLength``).
        var bytes: ArraySlice<UInt8>
        /// True when the line was longer than the limit and only its start is in ``bytes``.
        var isTruncated: Bool
    }

    /// The longest line kept whole: Open Library records reach a few MB (long tables of contents).
    static let maximumLineLength = 64 << 20
    private static let chunkSize = 1 << 20

    let path: String
    /// True when the file is gzip-compressed (detected from its first two bytes, not its name).
    let isCompressed: Bool
    /// The file's size on disk (compressed size for gzip files).
    let fileSize: Int
    /// Bytes of the file consumed so far (for gzip files: decompressed bytes).
    private(set) var bytesRead = 0
    private(set) var lineNumber = 0

    private var descriptor: Int32
    private var process: Process?
    private var errorPipe: Pipe?
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var discardingLongLine = false

    /// Opens a dump.
    /// - Throws: ``CatalogError/dumpNotFound(path:)``, or ``CatalogError/dumpUnreadable(path:reason:)``
    ///   when it is a folder, not readable, or `gzip` cannot be started.
    init(path: String) throws(CatalogError) {
        self.path = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .dumpNotFound(path: path)
        }
        if isDirectory.boolValue { throw .dumpUnreadable(path: path, reason: "it is a folder") }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw .dumpUnreadable(path: path, reason: String(cString: strerror(errno))) }
        var status = stat()
        fileSize = fstat(fd, &status) == 0 ? Int(status.st_size) : 0
        var magic = [UInt8](repeating: 0, count: 2)
        let got = magic.withUnsafeMutableBytes { read(fd, $0.baseAddress, 2) }
        if got < 0 {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .dumpUnreadable(path: path, reason: reason)
        }
        isCompressed = got == 2 && magic == [0x1F, 0x8B]
        if isCompressed {
            close(fd)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["gzip", "-dc", "--", path]
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                throw .dumpUnreadable(path: path, reason: "cannot start gzip to decompress it (\(error.localizedDescription)); "
                                      + "install gzip or decompress the file first")
            }
            self.process = process
            self.errorPipe = errors
            descriptor = output.fileHandleForReading.fileDescriptor
            // Keep the pipe's reading end alive as long as the reader: the descriptor belongs to it.
            pipeKeeper = output
        } else {
            descriptor = fd
            bytesRead = got
            buffer.append(contentsOf: magic.prefix(got))
        }
    }

    /// Keeps gzip's output pipe (which owns ``descriptor`` for compressed files) alive.
    private var pipeKeeper: Pipe?
    private var chunk = [UInt8](repeating: 0, count: DumpLineReader.chunkSize)

    deinit {
        if pipeKeeper == nil, descriptor >= 0 { close(descriptor) }
        if let process, process.isRunning {
            // Closing the pipe first ends gzip even when it ignores SIGTERM (a child started
            // after the CLI set SIGINT/SIGTERM to "ignore" inherits that): its next write fails.
            try? pipeKeeper?.fileHandleForReading.close()
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The next line, or nil at the end of the file.
    /// - Throws: ``CatalogError/dumpUnreadable(path:reason:)`` on a read error or when gzip fails
    ///   (not a gzip stream, truncated file).
    func nextLine() throws(CatalogError) -> Line? {
        while true {
            // Find the next newline in what is buffered.
            let newline: Int? = buffer.withUnsafeBufferPointer { pointer -> Int? in
                guard start < pointer.count, let base = pointer.baseAddress else { return nil }
                guard let found = memchr(base + start, 0x0A, pointer.count - start) else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            if let newline {
                let lineStart = start
                start = newline + 1
                if discardingLongLine {
                    discardingLongLine = false
                    continue
                }
                lineNumber += 1
                return Line(number: lineNumber, bytes: trimmed(buffer[lineStart..<newline]), isTruncated: false)
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                let rest = buffer[start...]
                start = buffer.count
                if discardingLongLine {
                    discardingLongLine = false
                    return nil
                }
                lineNumber += 1
                return Line(number: lineNumber, bytes: trimmed(rest), isTruncated: false)
            }
            if buffer.count - start >= Self.maximumLineLength, !discardingLongLine {
                // Give the caller the start of the giant line; drop the rest of it as it arrives.
                lineNumber += 1
                let head = Array(buffer[start..<(start + Self.maximumLineLength)])
                buffer.removeAll(keepingCapacity: false)
                start = 0
                discardingLongLine = true
                return Line(number: lineNumber, bytes: head[...], isTruncated: true)
            }
            if discardingLongLine {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            try fill()
        }
    }

    private func trimmed(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == 0x0D ? line.dropLast() : line
    }

    /// Compacts the buffer and reads one more chunk.
    private func fill() throws(CatalogError) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        var readError: Int32 = 0
        var got: Int
        repeat {
            got = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, Self.chunkSize) }
            readError = got < 0 ? errno : 0
        } while got < 0 && readError == EINTR
        if got < 0 {
            throw .dumpUnreadable(path: path, reason: String(cString: strerror(readError)))
        }
        if got == 0 {
            atEnd = true
            try finishProcess()
            return
        }
        bytesRead += got
        buffer.append(contentsOf: chunk[0..<got])
    }

    /// Waits for gzip and turns a failure into an error naming the file.
    private func finishProcess() throws(CatalogError) {
        guard let process else { return }
        process.waitUntilExit()
        self.process = nil
        guard process.terminationStatus == 0 else {
            let message = (try? errorPipe?.fileHandleForReading.readToEnd()).flatMap { $0 }
                .map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
            throw .dumpUnreadable(path: path, reason: "gzip could not decompress it"
                                  + (message.isEmpty ? "" : " (\(message))"))
        }
    }
}
