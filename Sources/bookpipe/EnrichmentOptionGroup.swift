import ArgumentParser
import BookpipeCore
import BookpipePipeline
import BookpipeStages
import Foundation

/// Options of every command that enriches: where the sources are and how to use the cache.
struct EnrichmentOptionGroup: ParsableArguments {
    @Option(help: "The local catalogue built by `bookpipe catalog import` (default $BOOKPIPE_CATALOG, then the configuration file's; else none).")
    var catalog: String?

    @Option(name: .customLong("openlibrary-url"),
            help: "Open Library's base URL (default $BOOKPIPE_OPENLIBRARY_URL, the configuration file's, or https://openlibrary.org).")
    var openLibraryURL: String?

    @Option(name: .customLong("googlebooks-url"),
            help: "Google Books' base URL (default $BOOKPIPE_GOOGLEBOOKS_URL, the configuration file's, or https://www.googleapis.com). API key: $GOOGLE_BOOKS_API_KEY.")
    var googleBooksURL: String?

    @Option(help: "The chain of sources, in order, instead of the configuration file's or the pipeline file's (e.g. catalog,openlibrary).")
    var sources: String?

    @Flag(help: "Use only the local catalogue: no network.")
    var offline = false

    @Option(help: "A contact for the User-Agent, e.g. mailto:you@example.org (default $BOOKPIPE_CONTACT, then the configuration file's). Open Library asks bulk clients for one.")
    var contact: String?

    @Option(name: .customLong("openlibrary-rate"),
            help: "Requests per second to Open Library (default the configuration file's, then the pipeline file's, 3).")
    var openLibraryRate: String?

    @Option(name: .customLong("googlebooks-rate"),
            help: "Requests per second to Google Books (default the configuration file's, then the pipeline file's, 1).")
    var googleBooksRate: String?

    @Flag(help: "Ask the sources again instead of using cached answers (new answers replace the cached ones).")
    var refresh = false

    @Option(name: .customLong("max-cache-age"), help: "Ask again when a cached answer is older than this (e.g. 30d, 12h; default the configuration file's, then the pipeline file's).")
    var maxCacheAge: String?

    /// The settings these options describe, with environment variables, then the configuration
    /// files, as fallbacks.
    func settings(isEnabled: Bool, statuses: [RecordStatus] = [.pending]) throws -> EnrichmentSettings {
        let environment = ProcessInfo.processInfo.environment
        func nonEmpty(_ value: String?) -> String? {
            guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        var chain = LoadedConfiguration.value(.sources, flag: sources).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        if let chain {
            let unknown = chain.filter { !SourceChain.knownSources.contains($0) }
            if !unknown.isEmpty {
                throw ValidationError("--sources: unknown source \(unknown.joined(separator: ", ")); "
                                      + "known: \(SourceChain.knownSources.joined(separator: ", ")).")
            }
        }
        let catalogPath = LoadedConfiguration.value(.catalog, flag: nonEmpty(catalog))
        if offline {
            guard catalogPath != nil else {
                throw ValidationError("--offline uses only the local catalogue: pass --catalog FILE "
                                      + "(build one with `bookpipe catalog import DUMP --catalog FILE`).")
            }
            chain = ["catalog"]
        }
        if let catalogPath, !FileManager.default.fileExists(atPath: catalogPath) {
            throw ValidationError("\(catalogPath): no such catalogue; build it with `bookpipe catalog import DUMP --catalog \(catalogPath)`.")
        }
        var maximumCacheAge: Duration?
        if let maxCacheAge = LoadedConfiguration.value(.maxCacheAge, flag: maxCacheAge) {
            guard let parsed = DurationSyntax.parse(maxCacheAge) else {
                throw ValidationError("--max-cache-age takes a duration such as 30d, 12h or 90m, not '\(maxCacheAge)'.")
            }
            maximumCacheAge = parsed
        }
        var rates: [String: Double] = [:]
        for (key, flag, source) in [(ConfigurationKey.openLibraryRate, openLibraryRate, "openlibrary"),
                                    (.googleBooksRate, googleBooksRate, "googlebooks")] {
            guard let text = LoadedConfiguration.value(key, flag: flag) else { continue }
            guard let rate = RequestRate.parse(text) else {
                throw ValidationError("\(key.flag) takes a number of requests per second above 0, such as 3 or 0.5, not '\(text)'.")
            }
            rates[source] = rate
        }
        var settings = EnrichmentSettings(
            isEnabled: isEnabled, sources: chain, catalogPath: catalogPath,
            openLibraryURL: LoadedConfiguration.value(.openLibraryURL, flag: nonEmpty(openLibraryURL)),
            googleBooksURL: LoadedConfiguration.value(.googleBooksURL, flag: nonEmpty(googleBooksURL)),
            googleBooksAPIKey: nonEmpty(environment["GOOGLE_BOOKS_API_KEY"]),
            contact: LoadedConfiguration.value(.contact, flag: nonEmpty(contact)),
            refresh: refresh, maximumCacheAge: maximumCacheAge, statuses: statuses)
        settings.requestsPerSecond = rates
        return settings
    }
}
