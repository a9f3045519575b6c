// BookpipeEnrichment: see DESIGN.md §3.
//
// The sources are built on BookpipeHTTP (their initialisers take an ``HTTPClient`` and a
// ``PolicyHTTPFetcher``; their answers carry ``SourceStatistics``), so a module that uses them
// sees the transport types too.
@_exported import BookpipeHTTP
