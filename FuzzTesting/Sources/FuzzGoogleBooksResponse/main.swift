// Fuzz target: the decoder of Google Books' `volumes` answers, bytes to candidates, as
// GoogleBooksSource runs it. An answer is decoded or refused as malformed, never a crash; every
// candidate has a title.
@_spi(Fuzzing) import BookpipeEnrichment
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGoogleBooksResponse(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let body = Data(UnsafeRawBufferPointer(start: start, count: count))
    for candidate in (try? SourceResponseDecoding.googleBooksVolumes(body)) ?? [] {
        precondition(!candidate.title.isEmpty, "a candidate without a title")
    }
    return 0
}
