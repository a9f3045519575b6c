// Fuzz target: the decoders of Open Library's answers (Books API `jscmd=details` and
// `search.json`), bytes to candidates, as OpenLibrarySource runs them. An answer is decoded or
// refused as malformed, never a crash; every candidate has a title.
@_spi(Fuzzing) import BookpipeEnrichment
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpenLibraryResponse(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let body = Data(UnsafeRawBufferPointer(start: start, count: count))
    for candidates in [try? SourceResponseDecoding.openLibraryBooks(body), try? SourceResponseDecoding.openLibrarySearch(body)] {
        for candidate in candidates ?? [] {
            precondition(!candidate.title.isEmpty, "a candidate without a title")
        }
    }
    return 0
}
