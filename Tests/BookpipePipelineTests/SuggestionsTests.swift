import Testing
import BookpipePipeline

@Suite struct SuggestionsTests {
    @Test("Edit distance counts insertions, deletions, substitutions and neighbour swaps as one each", arguments: [
        ("import", "import", 0), ("imprt", "import", 1), ("improt", "import", 1), ("ipmort", "import", 1),
        ("export", "import", 2), ("", "run", 3), ("run", "", 3), ("--no-enrichment", "--no-enrich", 4),
        ("ca", "abc", 3), ("abcd", "badc", 2),
    ])
    func distance(a: String, b: String, expected: Int) {
        #expect(Suggestions.editDistance(a, b) == expected)
        #expect(Suggestions.editDistance(b, a) == expected)
    }

    @Test("The closest name is offered only within a distance relative to the word's length")
    func closest() {
        let commands = ["import", "import-scan", "export", "review", "report", "run"]
        #expect(Suggestions.closest(to: "imprt", among: commands) == "import")
        #expect(Suggestions.closest(to: "reveiw", among: commands) == "review")
        #expect(Suggestions.closest(to: "IMPORT", among: commands) == "import")
        #expect(Suggestions.closest(to: "frobnicate", among: commands) == nil)
        #expect(Suggestions.closest(to: "--no-enrichment", among: ["--no-enrich", "--dry-run", "--format"]) == "--no-enrich")
    }
}
