import BookpipeScan
import Testing

@Suite struct URLReferenceTests {
    /// RFC 3986 §5.4.1 and §5.4.2, against the base `http://a/b/c/d;p?q`.
    static let rfcExamples: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"), ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"), ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"),
        ("http:g", "http:g"),
    ]

    @Test("Every example of RFC 3986 §5.4 resolves as the RFC says", arguments: rfcExamples)
    func rfcExample(reference: String, expected: String) {
        #expect(URLReference.resolve(reference, against: "http://a/b/c/d;p?q") == expected)
    }

    @Test("A stream URL resolves against the backend's base URL, with or without a path")
    func streamURLs() {
        #expect(URLReference.resolve("/v3/jobs/scans/7/stream", against: "http://127.0.0.1:8080")
                == "http://127.0.0.1:8080/v3/jobs/scans/7/stream")
        #expect(URLReference.resolve("v3/jobs/scans/7/stream", against: "http://127.0.0.1:8080")
                == "http://127.0.0.1:8080/v3/jobs/scans/7/stream")
        #expect(URLReference.resolve("jobs/7/stream", against: "https://h/api/")
                == "https://h/api/jobs/7/stream")
        #expect(URLReference.resolve("http://other:9/s", against: "https://h/api/") == "http://other:9/s")
    }
}
