import Testing

@testable import BookpipeIngest

@Suite struct ContentFingerprintTests {
    static func fingerprint(_ bytes: [UInt8], chunk: Int) -> String {
        var fingerprint = ContentFingerprint()
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + chunk)
            bytes[index..<end].withUnsafeBytes { fingerprint.update($0) }
            index = end
        }
        return fingerprint.finalize()
    }

    @Test("Chunk boundaries do not change the fingerprint", arguments: [1, 3, 7, 8, 13, 64, 1000])
    func chunkIndependent(chunk: Int) {
        let bytes = (0..<1001).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        #expect(Self.fingerprint(bytes, chunk: chunk) == Self.fingerprint(bytes, chunk: bytes.count))
    }

    @Test("Length, a single flipped bit and trailing zero bytes all change the fingerprint")
    func sensitive() {
        let base = Array("Book Id,Title\n1,Dune\n".utf8)
        var flipped = base
        flipped[5] ^= 1
        let all = [base, flipped, base + [0], base + [0, 0], [], [0]].map { Self.fingerprint($0, chunk: 8) }
        #expect(Set(all).count == all.count)
        #expect(all.allSatisfy { $0.count == 32 })
    }
}
