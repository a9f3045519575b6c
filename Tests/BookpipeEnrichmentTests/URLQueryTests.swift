import Testing
@testable import BookpipeEnrichment

@Suite struct URLQueryTests {
    @Test("Values are percent-encoded so that no character changes the query's meaning")
    func encodesValues() {
        #expect(URLQuery.string([("title", "Harry Potter & the Philosopher's Stone"), ("limit", "10")])
                == "title=Harry%20Potter%20%26%20the%20Philosopher%27s%20Stone&limit=10")
        #expect(URLQuery.encode("a+b=c#d%e?f/g") == "a%2Bb%3Dc%23d%25e%3Ff%2Fg")
        #expect(URLQuery.encode("Långstrump") == "L%C3%A5ngstrump")
    }

    @Test("Characters a caller allows stay; spaces can be written as +")
    func keepsAllowed() {
        #expect(URLQuery.string([("bibkeys", "ISBN:9780140328721,ISBN:9780261103344")], keeping: ":,")
                == "bibkeys=ISBN:9780140328721,ISBN:9780261103344")
        #expect(URLQuery.encode("intitle:Children of Time+1", keeping: ":", spaceAsPlus: true)
                == "intitle:Children+of+Time%2B1")
    }
}
