#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An open file descriptor, closed on deinit. Reads with `pread`, so positions are explicit and
/// the parser can go back to re-read from an earlier line.
final class FileDescriptorReader {
    let descriptor: Int32
    let path: String

    /// Opens `path` for reading.
    init(path: String) throws(IngestError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .cannotOpen(file: path, reason: Self.errnoText())
        }
        var info = stat()
        if fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
            close(descriptor)
            throw .cannotOpen(file: path, reason: "it is a directory")
        }
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes ownership of an already open descriptor.
    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// The file's size in bytes.
    func size() throws(IngestError) -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .readFailed(file: path, reason: Self.errnoText()) }
        return Int(info.st_size)
    }

    /// Fills `buffer` from `offset` until it is full or the file ends; returns the bytes read.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(IngestError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let count = pread(descriptor, base + total, buffer.count - total, off_t(offset + total))
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(file: path, reason: Self.errnoText())
            }
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Reads up to `count` bytes at `offset` into a new array (shorter at the end of the file).
    func readBytes(at offset: Int, count: Int) throws(IngestError) -> [UInt8] {
        guard count > 0 else { return [] }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        let read = try self.read(into: buffer, at: offset)
        return Array(buffer[0..<read])
    }

    /// Writes all of `bytes` at the end of the file.
    func append(_ bytes: [UInt8]) throws(IngestError) {
        let failure: IngestError? = bytes.withUnsafeBytes { raw in
            do throws(IngestError) {
                try append(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Writes all of `bytes` at the end of the file.
    func append(_ bytes: UnsafeRawBufferPointer) throws(IngestError) {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let count = write(descriptor, base + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw .readFailed(file: path, reason: "cannot write the UTF-8 copy: " + Self.errnoText())
            }
            written += count
        }
    }

    /// The text for the current `errno`.
    static func errnoText() -> String {
        guard let text = strerror(errno) else { return "error \(errno)" }
        return String(cString: text)
    }

    /// A new, already unlinked temporary file (it disappears when the descriptor closes).
    static func temporary(for path: String) throws(IngestError) -> FileDescriptorReader {
        var directory = "/tmp"
        if let value = getenv("TMPDIR"), value.pointee != 0 { directory = String(cString: value) }
        var template = Array((directory + "/bookpipe-utf8-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw .readFailed(file: path, reason: "cannot create a temporary UTF-8 copy in \(directory): " + errnoText())
        }
        let name = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        unlink(name)
        return FileDescriptorReader(descriptor: descriptor, path: path)
    }
}

/// A 1 MiB window over a file that the parser walks through and can move back in.
final class ChunkedInput {
    static let chunkSize = 1 << 20

    let reader: FileDescriptorReader
    let size: Int
    let buffer: UnsafeMutableRawBufferPointer
    /// File offset of `buffer[0]`.
    @exclusivity(unchecked) private(set) var bufferOffset = 0
    /// Valid bytes in `buffer`.
    @exclusivity(unchecked) private(set) var bufferCount = 0
    /// Next byte to hand out.
    @exclusivity(unchecked) var cursor = 0
    /// Cached index of the next LF / CR at or after the cursor (nil: not searched yet).
    @exclusivity(unchecked) var nextLF: Int?
    @exclusivity(unchecked) var nextCR: Int?

    init(reader: FileDescriptorReader, start: Int) throws(IngestError) {
        self.reader = reader
        self.size = try reader.size()
        self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        try load(at: start)
    }

    deinit { buffer.deallocate() }

    /// The file offset of the cursor.
    var position: Int { bufferOffset + cursor }

    /// True when every byte has been handed out.
    var isAtEnd: Bool { cursor >= bufferCount && bufferOffset + bufferCount >= size }

    private func load(at offset: Int) throws(IngestError) {
        bufferOffset = offset
        bufferCount = try reader.read(into: buffer, at: offset)
        cursor = 0
        nextLF = nil
        nextCR = nil
    }

    /// Makes sure at least one byte is available at the cursor; false at the end of the file.
    func ensureBytes() throws(IngestError) -> Bool {
        if cursor < bufferCount { return true }
        if bufferOffset + bufferCount >= size { return false }
        try load(at: bufferOffset + bufferCount)
        return bufferCount > 0
    }

    /// Moves the cursor to a file offset (re-reading when it is outside the window).
    func seek(to offset: Int) throws(IngestError) {
        if offset >= bufferOffset && offset <= bufferOffset + bufferCount {
            cursor = offset - bufferOffset
            nextLF = nil
            nextCR = nil
        } else {
            try load(at: offset)
        }
    }

    /// Index of the next `byte` at or after the cursor, or `bufferCount` when there is none.
    @inline(__always)
    func find(_ byte: UInt8, cached: inout Int?) -> Int {
        if let known = cached, known >= cursor { return known }
        guard let base = buffer.baseAddress, cursor < bufferCount else { return bufferCount }
        let found: Int
        if let hit = memchr(base + cursor, Int32(byte), bufferCount - cursor) {
            found = base.distance(to: hit)
        } else {
            found = bufferCount
        }
        cached = found
        return found
    }

    /// Reads up to `limit` bytes at `offset` without moving the window (for rejected rows' text).
    func peek(at offset: Int, limit: Int) throws(IngestError) -> [UInt8] {
        let count = max(0, min(limit, size - offset))
        guard count > 0 else { return [] }
        return try reader.readBytes(at: offset, count: count)
    }
}

/// Streams a UTF-16 file (after its byte-order mark) into a temporary UTF-8 file, 1 MiB at a time.
enum UTF16Transcoder {
    /// Returns the UTF-8 copy and how many unpaired surrogates became U+FFFD.
    static func transcode(
        _ source: FileDescriptorReader, bigEndian: Bool, path: String
    ) throws(IngestError) -> (copy: FileDescriptorReader, replaced: Int) {
        let copy = try FileDescriptorReader.temporary(for: path)
        let size = try source.size()
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: ChunkedInput.chunkSize, alignment: 16)
        defer { input.deallocate() }
        var output: [UInt8] = []
        output.reserveCapacity(ChunkedInput.chunkSize * 2)
        var offset = 2
        var pendingHigh: UInt16?
        var replaced = 0

        func emit(_ scalar: Unicode.Scalar) {
            let value = scalar.value
            switch value {
            case 0..<0x80:
                output.append(UInt8(value))
            case 0x80..<0x800:
                output.append(UInt8(0xC0 | (value >> 6)))
                output.append(UInt8(0x80 | (value & 0x3F)))
            case 0x800..<0x10000:
                output.append(UInt8(0xE0 | (value >> 12)))
                output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
                output.append(UInt8(0x80 | (value & 0x3F)))
            default:
                output.append(UInt8(0xF0 | (value >> 18)))
                output.append(UInt8(0x80 | ((value >> 12) & 0x3F)))
                output.append(UInt8(0x80 | ((value >> 6) & 0x3F)))
                output.append(UInt8(0x80 | (value & 0x3F)))
            }
        }

        while offset < size {
            // Read an even number of bytes so code units never straddle chunks.
            let want = UnsafeMutableRawBufferPointer(rebasing: input[0..<ChunkedInput.chunkSize])
            let count = try source.read(into: want, at: offset)
            if count == 0 { break }
            let units = count / 2
            for index in 0..<units {
                let first = UInt16(input[index * 2])
                let second = UInt16(input[index * 2 + 1])
                let unit = bigEndian ? (first << 8 | second) : (second << 8 | first)
                if let high = pendingHigh {
                    pendingHigh = nil
                    if unit >= 0xDC00 && unit <= 0xDFFF {
                        let value = 0x10000 + ((UInt32(high) - 0xD800) << 10) + (UInt32(unit) - 0xDC00)
                        emit(Unicode.Scalar(value) ?? "\u{FFFD}")
                        continue
                    }
                    emit("\u{FFFD}")
                    replaced += 1
                }
                if unit >= 0xD800 && unit <= 0xDBFF {
                    pendingHigh = unit
                } else if unit >= 0xDC00 && unit <= 0xDFFF {
                    emit("\u{FFFD}")
                    replaced += 1
                } else if let scalar = Unicode.Scalar(unit) {
                    emit(scalar)
                }
            }
            offset += units * 2
            if count % 2 == 1 && offset + 1 >= size {
                replaced += 1  // a lone trailing byte
                emit("\u{FFFD}")
                offset = size
            }
            try copy.append(output)
            output.removeAll(keepingCapacity: true)
        }
        if pendingHigh != nil {
            emit("\u{FFFD}")
            replaced += 1
            try copy.append(output)
        }
        return (copy, replaced)
    }
}
