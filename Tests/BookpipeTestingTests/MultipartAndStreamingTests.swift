import BookpipeHTTP
import Foundation
import Testing
@testable import BookpipeTesting

@Suite("Multipart bodies, chunked requests and streamed responses on the loopback server",
       .timeLimit(.minutes(5)))
struct MultipartAndStreamingTests {
    @Test("A binary part with CR, LF and dashes inside comes back byte for byte; parameters may be quoted")
    func binaryPart() throws {
        let content: [UInt8] = [0xFF, 0xD8, 13, 10, 45, 45, 0x62, 0x00, 13, 10, 13, 10, 0xFF, 0xD9]
        let body = Array("--b0und\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n".utf8)
            + Array("--b0und\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a \\\"b\\\".jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
            + content + Array("\r\n--b0und--\r\n".utf8)
        let form = try ReceivedMultipartForm(body: body, contentType: "multipart/form-data; boundary=\"b0und\"")
        #expect(form.parts.map(\.name) == ["note", "image"])
        #expect(form.part(named: "note")?.body == Array("hello".utf8))
        let image = try #require(form.part(named: "image"))
        #expect(image.filename == "a \"b\".jpg")
        #expect(image.contentType == "image/jpeg")
        #expect(image.body == content)
    }

    @Test("A body without its closing boundary, or a content type without one, is refused with a reason")
    func malformedForms() {
        #expect(throws: ReceivedMultipartForm.FormatError(reason: "the closing boundary --x-- is missing")) {
            try ReceivedMultipartForm(body: Array("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nabc".utf8),
                                  contentType: "multipart/form-data; boundary=x")
        }
        #expect(throws: ReceivedMultipartForm.FormatError(reason: "Content-Type has no boundary parameter")) {
            try ReceivedMultipartForm(body: [], contentType: "multipart/form-data")
        }
        #expect(throws: ReceivedMultipartForm.FormatError(reason: "Content-Type is application/json, not multipart/form-data")) {
            try ReceivedMultipartForm(body: [], contentType: "application/json")
        }
    }

    @Test("Chunked request bodies are decoded (extensions and trailers skipped); partial ones wait for more")
    func chunkedDecoding() {
        let body = Array("4;ext=1\r\nWiki\r\n5\r\npedia\r\n0\r\nTrailer: x\r\n\r\nNEXT".utf8)
        #expect(LoopbackHTTPServer.decodeChunkedBody(body, from: 0)
                == .complete(body: Array("Wikipedia".utf8), end: body.count - 4))
        #expect(LoopbackHTTPServer.decodeChunkedBody(Array("4\r\nWi".utf8), from: 0) == .incomplete)
        #expect(LoopbackHTTPServer.decodeChunkedBody(Array("zz\r\n".utf8), from: 0) == .malformed)
    }

    @Test("A chunked upload after Expect: 100-continue reaches the handler intact")
    func chunkedUploadOverTheWire() async throws {
        let server = LoopbackHTTPServer { request in
            .text("\(request.body.count) \(request.header("Transfer-Encoding") ?? "-")")
        }
        try server.start()
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chunked-\(UUID().uuidString).bin")
        try Data((0..<300_000).map { UInt8($0 % 251) }).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let response = try await Curl.run(["-H", "Transfer-Encoding: chunked", "-H", "Expect: 100-continue",
                                           "--data-binary", "@\(file.path)", server.baseURL + "/upload"])
        #expect(response.text == "300000 chunked")
        #expect(response.informationalStatuses == [100])   // without it curl sends the body after waiting 1 s
    }

    @Test("A streamed body arrives piece by piece, chunked on a reusable connection, or closed by the server")
    func streamedBodies() async throws {
        let server = LoopbackHTTPServer { request in
            .streaming(headers: [("Content-Type", "text/plain")],
                       framing: request.path == "/close" ? .untilClose : .chunked) { stream in
                for piece in ["one ", "two ", "three"] {
                    guard stream.write(piece), stream.pause(for: .milliseconds(30)) else { return .dropped }
                }
                return request.path == "/cut" ? .dropped : .finished
            }
        }
        try server.start()
        defer { server.stop() }
        let client = try HTTPClient()
        defer { client.close() }
        let chunked = try await client.get(server.baseURL + "/chunked")
        #expect(chunked.bodyText == "one two three")
        #expect(chunked.headers["Transfer-Encoding"] == "chunked")
        let closed = try await client.get(server.baseURL + "/close")
        #expect(closed.bodyText == "one two three")
        #expect(closed.headers["Connection"] == "close")
        let cut = try await Curl.run([server.baseURL + "/cut"])
        #expect(cut.exitStatus == 18)
        #expect(cut.text == "one two three")
    }
}
