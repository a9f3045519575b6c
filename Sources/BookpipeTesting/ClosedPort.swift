import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A loopback port that refuses every connection for as long as this value lives: a socket bound
/// to `127.0.0.1` that never listens. Unlike the port of a server that was stopped, no other test
/// can start a server on it meanwhile, so "connection refused" is certain.
///
/// ```swift
/// let closed = try ClosedPort()
/// defer { closed.close() }
/// try await client.get("http://127.0.0.1:\(closed.port)/")   // throws couldNotConnect (connection refused)
/// ```
public final class ClosedPort: Sendable {
    /// The port (on 127.0.0.1).
    public let port: UInt16
    private let descriptor: Mutex<Int32?>

    /// Binds a socket to a free loopback port, without listening.
    /// - Throws: ``LoopbackServerError`` when the socket cannot be made or bound.
    public init() throws(LoopbackServerError) {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw LoopbackServerError(call: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = bound == 0 ? withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        } : -1
        guard named == 0 else {
            let code = errno
            closeDescriptor(socketDescriptor)
            throw LoopbackServerError(call: "bind(127.0.0.1:0)", code: code)
        }
        descriptor = Mutex(socketDescriptor)
        port = UInt16(bigEndian: address.sin_port)
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Releases the port (once; later calls do nothing).
    public func close() {
        if let open = descriptor.withLock({ value in defer { value = nil }; return value }) { closeDescriptor(open) }
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(descriptor)
    #else
    _ = Darwin.close(descriptor)
    #endif
}
