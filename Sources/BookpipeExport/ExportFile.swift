import Foundation

/// Buffered output to standard output (`-`) or to a file that is written under a temporary name
/// (`path` + `.partial`) and renamed to `path` when closed.
struct ExportFile: TextOutputStream {
    private let path: String
    private let temporaryPath: String?
    private let handle: FileHandle
    private var buffer = Data()

    /// Opens the output.
    /// - Throws: ``ExportError`` when the temporary file cannot be created.
    init(path: String) throws(ExportError) {
        self.path = path
        if path == "-" {
            temporaryPath = nil
            handle = FileHandle.standardOutput
        } else {
            let temporary = path + ".partial"
            guard FileManager.default.createFile(atPath: temporary, contents: nil),
                  let handle = FileHandle(forWritingAtPath: temporary) else {
                throw ExportError(path: path)
            }
            temporaryPath = temporary
            self.handle = handle
        }
    }

    /// Appends `text` (written in pieces of about a megabyte).
    mutating func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { flush() }
    }

    private mutating func flush() {
        handle.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered and, for a file, replaces `path` with the temporary file.
    /// - Throws: ``ExportError`` when the file cannot be closed or renamed.
    mutating func close() throws(ExportError) {
        flush()
        guard let temporaryPath else { return }
        do {
            try handle.close()
            _ = try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: temporaryPath, toPath: path)
        } catch {
            throw ExportError(path: path, reason: error.localizedDescription)
        }
    }

    /// Removes the temporary file of an export that failed (`path` itself is left as it was).
    func discard() {
        guard let temporaryPath else { return }
        try? handle.close()
        try? FileManager.default.removeItem(atPath: temporaryPath)
    }
}

/// An export's output could not be written.
public struct ExportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The output file.
    public var path: String
    /// The system's reason, when it gave one.
    public var reason: String?

    /// Creates an error about the output file at `path`.
    public init(path: String, reason: String? = nil) {
        self.path = path
        self.reason = reason
    }

    /// What went wrong and what to do, for people.
    public var description: String {
        let because = reason.map { " (\($0))" } ?? ""
        return "\(path): cannot write here\(because). Check the folder exists and is writable."
    }
}
