/// A fast 128-bit fingerprint of a file's bytes: the first half of every record id.
///
/// Two independent 64-bit lanes consume the input as little-endian 8-byte words (each lane a
/// multiply–rotate–multiply step with its own constants); the tail bytes and the total length are
/// mixed in at the end and both lanes are finished with an avalanche step. It runs at several GB/s.
///
/// It is **not cryptographic**: it tells apart different exports, it does not resist someone who
/// crafts a collision on purpose. That is enough for its job (the same file gives the same record
/// ids wherever it lives; a changed file gives new ones).
///
/// ```swift
/// var fingerprint = ContentFingerprint()
/// fingerprint.update(chunk)          // any number of times, any chunk sizes
/// let hex = fingerprint.finalize()   // 32 lower-case hex digits
/// ```
public struct ContentFingerprint: Sendable {
    private var laneA: UInt64 = 0x243F_6A88_85A3_08D3
    private var laneB: UInt64 = 0x1319_8A2E_0370_7344
    private var length: UInt64 = 0
    private var carry: UInt64 = 0
    private var carryCount = 0

    private static let k1: UInt64 = 0x9E37_79B9_7F4A_7C15
    private static let k2: UInt64 = 0xBF58_476D_1CE4_E5B9
    private static let k3: UInt64 = 0x94D0_49BB_1331_11EB
    private static let k4: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    /// Creates an empty fingerprint.
    public init() {}

    @inline(__always)
    private static func rotl(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }

    @inline(__always)
    private mutating func mix(_ word: UInt64) {
        laneA = Self.rotl(laneA ^ (word &* Self.k1), 31) &* Self.k2
        laneB = Self.rotl(laneB &+ (Self.rotl(word, 32) &* Self.k3), 27) &* Self.k4
    }

    /// Adds bytes; chunk boundaries do not change the result.
    /// - Parameter bytes: The next bytes of the content.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let count = bytes.count
        guard count > 0, let base = bytes.baseAddress else { return }
        length &+= UInt64(count)
        var index = 0
        while carryCount > 0 && carryCount < 8 && index < count {
            carry |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(carryCount))
            carryCount += 1
            index += 1
        }
        if carryCount == 8 {
            mix(carry)
            carry = 0
            carryCount = 0
        }
        while index + 8 <= count {
            mix(UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            index += 8
        }
        while index < count {
            carry |= UInt64(base.load(fromByteOffset: index, as: UInt8.self)) << (8 * UInt64(carryCount))
            carryCount += 1
            index += 1
        }
    }

    @inline(__always)
    private static func avalanche(_ value: UInt64) -> UInt64 {
        var x = value
        x ^= x >> 33
        x &*= 0xFF51_AFD7_ED55_8CCD
        x ^= x >> 33
        x &*= 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 33
        return x
    }

    /// The fingerprint as 32 lower-case hex digits.
    public func finalize() -> String {
        var a = laneA
        var b = laneB
        if carryCount > 0 {
            a = Self.rotl(a ^ (carry &* Self.k1), 31) &* Self.k2
            b = Self.rotl(b &+ (carry &* Self.k3), 27) &* Self.k4
        }
        a ^= length
        b ^= length &* Self.k1
        a = Self.avalanche(a &+ b)
        b = Self.avalanche(b &+ a)
        return Self.hex(a) + Self.hex(b)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
