#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

/// Fingerprints input files on another thread while the command does something else (the import
/// opens or creates its library meanwhile), so that ``CSVRecordReader`` finds the fingerprint made.
///
/// The one speed measure of the reader's start (benchmarks/import/README.md, item 33): the
/// fingerprint pass reads the whole file before the first row (about 0.1 s for 1,000,000 rows) and
/// the library's opening takes about as long on one core; on two cores they now overlap.
///
/// A fingerprint is used only for the same file unchanged: the device, inode, size and modification
/// time seen by the reader's own descriptor must be those seen before and after the pass, or the
/// reader fingerprints the file itself, as it always did. Files not asked for are read as before.
///
/// ```swift
/// FingerprintPrefetch.shared.start(paths: inputs)   // before opening the library
/// let reader = try CSVRecordReader(path: inputs[0])  // takes the fingerprint, waiting if needed
/// ```
public final class FingerprintPrefetch: Sendable {
    /// The process's prefetch, which ``CSVRecordReader`` consults.
    public static let shared = FingerprintPrefetch()

    /// A file as `fstat` sees it; equal identities mean the same, unchanged bytes.
    struct Identity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64

        init?(descriptor: Int32) {
            var info = stat()
            guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modifiedSeconds = Int64(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
        }
    }

    /// One file's pass: done when `finished` is signalled; `result` is written before that.
    private final class Pending: @unchecked Sendable {
        let finished = DispatchSemaphore(value: 0)
        var result: (identity: Identity, fingerprint: String)?
    }

    private let pending = Mutex<[String: Pending]>([:])

    /// Creates an empty prefetch (the tests make their own).
    public init() {}

    /// Starts fingerprinting the files not yet asked for, one after another on one background thread.
    /// - Parameter paths: The input files, in the order they will be read.
    public func start(paths: [String]) {
        var started: [(String, Pending)] = []
        pending.withLock { table in
            for path in paths where table[path] == nil {
                let entry = Pending()
                table[path] = entry
                started.append((path, entry))
            }
        }
        guard !started.isEmpty else { return }
        let work = started
        DispatchQueue.global(qos: .userInitiated).async {
            for (path, entry) in work {
                entry.result = Self.fingerprint(path: path)
                entry.finished.signal()
            }
        }
    }

    /// The fingerprint made for `path`, if one was started, waiting for its pass to end; nil when
    /// none was started, the pass failed, or the file the descriptor reads is not the one hashed.
    /// Each started fingerprint is handed out once.
    func take(path: String, descriptor: Int32) -> String? {
        guard let entry = pending.withLock({ $0.removeValue(forKey: path) }) else { return nil }
        entry.finished.wait()
        guard let result = entry.result, Identity(descriptor: descriptor) == result.identity else { return nil }
        return result.fingerprint
    }

    /// The fingerprint of a regular file that did not change while it was read, and its identity.
    static func fingerprint(path: String) -> (identity: Identity, fingerprint: String)? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let source = FileDescriptorReader(descriptor: descriptor, path: path)
        guard let before = Identity(descriptor: descriptor),
              let fingerprint = try? CSVRecordReader.fingerprintPass(source, size: Int(before.size)).fingerprint,
              let after = Identity(descriptor: descriptor), after == before
        else { return nil }
        return (before, fingerprint)
    }
}
