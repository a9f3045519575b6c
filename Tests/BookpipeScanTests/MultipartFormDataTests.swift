@testable import BookpipeScan
import Testing

@Suite struct MultipartFormDataTests {
    @Test("A file part carries its name, file name and type, and the body ends with the closing boundary")
    func filePart() {
        var form = MultipartFormData(boundary: "XyZ")
        form.appendFile(name: "image", filename: "shelf 1.jpg", contentType: "image/jpeg", bytes: [0xFF, 0xD8, 0xFF, 0xD9])
        let expected: [UInt8] = Array("--XyZ\r\nContent-Disposition: form-data; name=\"image\"; filename=\"shelf 1.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
            + [0xFF, 0xD8, 0xFF, 0xD9] + Array("\r\n--XyZ--\r\n".utf8)
        #expect(form.encoded() == expected)
        #expect(form.contentType == "multipart/form-data; boundary=XyZ")
    }

    @Test("Quotes and line breaks in a file name are percent-encoded, so they cannot end the header")
    func escapesFileName() {
        var form = MultipartFormData(boundary: "b")
        form.appendFile(name: "image", filename: "a\"b\r\nc.jpg", contentType: "image/jpeg", bytes: [])
        let text = String(decoding: form.encoded(), as: UTF8.self)
        #expect(text.contains("filename=\"a%22b%0D%0Ac.jpg\""))
    }

    @Test("Random boundaries differ and are long enough not to occur in a photo")
    func randomBoundary() {
        let first = MultipartFormData(), second = MultipartFormData()
        #expect(first.boundary != second.boundary)
        #expect(first.boundary.count == "bookpipe-".count + 32)
    }
}
