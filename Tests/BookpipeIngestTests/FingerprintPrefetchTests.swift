import Foundation
import Testing

@testable import BookpipeIngest

@Suite struct FingerprintPrefetchTests {
    static func fingerprint(_ bytes: [UInt8]) -> String {
        var fingerprint = ContentFingerprint()
        bytes.withUnsafeBytes { fingerprint.update($0) }
        return fingerprint.finalize()
    }

    @Test("A reader given a prefetched fingerprint has the file's own, and the same records as without")
    func readerTakesPrefetch() throws {
        let directory = try TemporaryDirectory()
        let text = "Book Id,Title,Author\n1,Dune,Frank Herbert\n2,Emma,Jane Austen\n"
        let path = try directory.write("prefetched.csv", text)
        let plain = try importAll(path)
        FingerprintPrefetch.shared.start(paths: [path])
        let prefetched = try importAll(path)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(descriptor) }
        // The reader took it: nothing is left to take.
        #expect(FingerprintPrefetch.shared.take(path: path, descriptor: descriptor) == nil)
        #expect(prefetched.fileHash == Self.fingerprint(Array(text.utf8)))
        #expect(prefetched.fileHash == plain.fileHash)
        #expect(prefetched.records.map(\.id) == plain.records.map(\.id))
    }

    @Test("A fingerprint is not used for a file changed after its pass")
    func changedFileIsNotTrusted() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.write("changing.csv", "Book Id,Title\n1,Dune\n")
        let early = try #require(FingerprintPrefetch.fingerprint(path: path))
        #expect(early.fingerprint == Self.fingerprint(Array("Book Id,Title\n1,Dune\n".utf8)))
        _ = try directory.write("changing.csv", "Book Id,Title\n1,Dune\n2,Emma\n")
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        defer { close(descriptor) }
        #expect(FingerprintPrefetch.Identity(descriptor: descriptor) != early.identity)

        // A descriptor of another file (another inode) never gets the pass's fingerprint.
        let other = try directory.write("other.csv", "Book Id,Title\n1,Dune\n2,Emma\n")
        let prefetch = FingerprintPrefetch()
        prefetch.start(paths: [other])
        #expect(prefetch.take(path: other, descriptor: descriptor) == nil)
        let otherDescriptor = open(other, O_RDONLY | O_CLOEXEC)
        defer { close(otherDescriptor) }
        prefetch.start(paths: [other])
        #expect(prefetch.take(path: other, descriptor: otherDescriptor)
            == Self.fingerprint(Array("Book Id,Title\n1,Dune\n2,Emma\n".utf8)))
        #expect(prefetch.take(path: other, descriptor: otherDescriptor) == nil)
    }
}
