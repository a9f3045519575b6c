import Foundation
import Testing
import BookpipePipeline

@Suite struct ConfigurationFileTests {
    let sources = ["catalog", "openlibrary", "googlebooks"]

    func parse(_ text: String, path: String = "/books/bookpipe.yaml") throws(ConfigurationError) -> ConfigurationFile {
        try ConfigurationFile.parse(text, path: path, knownSources: sources, homeDirectory: "/home/reader")
    }

    @Test("Reads every key as its flag would take it: paths beside the file or under ~, a list joined with commas")
    func readsKeys() throws {
        let file = try parse("""
            # settings for this library
            library: shelf/library.sqlite
            catalog: ~/catalogs/ol.sqlite
            contact: mailto:me@example.org
            sources: [catalog, openlibrary]
            openlibrary-url: http://127.0.0.1:8080
            max-cache-age: 30d
            scan-backend: https://scan.example.org
            openlibrary-rate: 0.5
            """)
        #expect(file.entries[.library]?.value == "/books/shelf/library.sqlite")
        #expect(file.entries[.catalog]?.value == "/home/reader/catalogs/ol.sqlite")
        #expect(file.entries[.contact]?.value == "mailto:me@example.org")
        #expect(file.entries[.sources]?.value == "catalog,openlibrary")
        #expect(file.entries[.openLibraryURL]?.value == "http://127.0.0.1:8080")
        #expect(file.entries[.maxCacheAge]?.value == "30d")
        #expect(file.entries[.scanBackend]?.value == "https://scan.example.org")
        #expect(file.entries[.openLibraryRate]?.value == "0.5")
        #expect(file.entries[.catalog]?.location == SourceLocation(file: "/books/bookpipe.yaml", line: 3, column: 1))
        #expect(file.entries[.googleBooksURL] == nil)
    }

    @Test("An empty file or one of comments sets nothing")
    func emptyFile() throws {
        #expect(try parse("").entries.isEmpty)
        #expect(try parse("# nothing yet\n").entries.isEmpty)
    }

    @Test("An unknown key names file, line and column, the closest key and every valid key")
    func unknownKey() {
        #expect {
            _ = try parse("contact: me\ncatalogue: x.sqlite\n")
        } throws: { error in
            (error as? ConfigurationError)?.description == """
                /books/bookpipe.yaml:2:1: error: unknown key 'catalogue'
                  did you mean 'catalog'? valid keys: library, catalog, contact, sources, openlibrary-url, googlebooks-url, max-cache-age, openlibrary-rate, googlebooks-rate, scan-backend
                """
        }
    }

    @Test("An unknown source names the line, the closest source and the valid ones")
    func unknownSource() {
        #expect {
            _ = try parse("sources:\n  - catalog\n  - openlibary\n")
        } throws: { error in
            (error as? ConfigurationError)?.description == """
                /books/bookpipe.yaml:2:3: error: unknown source 'openlibary'
                  did you mean 'openlibrary'? valid sources: catalog, openlibrary, googlebooks
                """
        }
    }

    @Test("Wrong values are errors at their line", arguments: [
        ("max-cache-age: soon", "/books/bookpipe.yaml:1:16: error: 'max-cache-age' must be a duration, not 'soon'\n  for example 30d, 12h or 90m"),
        ("openlibrary-url: openlibrary.org", "/books/bookpipe.yaml:1:18: error: 'openlibrary-url' must be an http:// or https:// URL, not 'openlibrary.org'"),
        ("catalog:", "/books/bookpipe.yaml:1:9: error: 'catalog' needs a value\n  give one, or remove the line"),
        ("contact: ~", "/books/bookpipe.yaml:1:10: error: 'contact' needs a value\n  give one, or remove the line"),
        ("openlibrary-rate: 0", "/books/bookpipe.yaml:1:19: error: 'openlibrary-rate' must be a number of requests per second above 0, not '0'\n"
            + "  for example 3, or 0.5 for one request every 2 seconds"),
        ("googlebooks-rate: fast", "/books/bookpipe.yaml:1:19: error: 'googlebooks-rate' must be a number of requests per second above 0, not 'fast'\n"
            + "  for example 3, or 0.5 for one request every 2 seconds"),
        ("contact: [a, b]", "/books/bookpipe.yaml:1:10: error: 'contact' takes one value, not a list or a mapping"),
        ("- catalog", "/books/bookpipe.yaml:1:1: error: a configuration file is a mapping of keys to values\n"
            + "  write one 'key: value' a line; keys: library, catalog, contact, sources, openlibrary-url, googlebooks-url, max-cache-age, openlibrary-rate, googlebooks-rate, scan-backend"),
    ])
    func wrongValues(text: String, message: String) {
        #expect {
            _ = try parse(text)
        } throws: { error in
            (error as? ConfigurationError)?.description == message
        }
    }

    @Test("Text that is not YAML is an error at the scanner's line")
    func notYAML() {
        #expect {
            _ = try parse("contact: \"unclosed\n")
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.location.line == 2 && error.message.hasPrefix("not valid YAML")
        }
    }

    @Test("A flag wins over the environment, the environment over the files, the first file over the second, a file over the default")
    func precedence() throws {
        let beside = try parse("catalog: a.sqlite\ncontact: beside\n", path: "/books/bookpipe.yaml")
        let user = try parse("contact: user\nlibrary: /data/lib.sqlite\nsources: catalog\n", path: "/home/reader/.config/bookpipe/config.yaml")
        let layers = ConfigurationLayers(files: [beside, user], environment: ["BOOKPIPE_CATALOG": "env.sqlite", "BOOKPIPE_CONTACT": " "])
        #expect(layers.resolve(.catalog, flag: "flag.sqlite") == EffectiveSetting(key: .catalog, value: "flag.sqlite", origin: .flag("--catalog")))
        #expect(layers.resolve(.catalog, flag: nil) == EffectiveSetting(key: .catalog, value: "env.sqlite", origin: .environment("BOOKPIPE_CATALOG")))
        // An empty environment variable is not set.
        #expect(layers.resolve(.contact, flag: nil).origin.description == "/books/bookpipe.yaml:2")
        #expect(layers.resolve(.library, flag: nil).origin.description == "/home/reader/.config/bookpipe/config.yaml:2")
        #expect(layers.resolve(.sources, flag: nil).value == "catalog")
        #expect(layers.resolve(.maxCacheAge, flag: nil) == EffectiveSetting(key: .maxCacheAge, value: nil, origin: .builtIn))
        let none = ConfigurationLayers(files: [], environment: [:])
        #expect(none.resolve(.library, flag: nil) == EffectiveSetting(key: .library, value: "library.sqlite", origin: .builtIn))
    }

    @Test("The file beside the library comes first: the folder of --library or $BOOKPIPE_LIBRARY, else the current one")
    func searchPaths() {
        #expect(ConfigurationLayers.searchPaths(libraryFlag: nil, environment: ["HOME": "/home/r"], currentDirectory: "/work")
                == ["/work/bookpipe.yaml", "/home/r/.config/bookpipe/config.yaml"])
        #expect(ConfigurationLayers.searchPaths(libraryFlag: "shelf/lib.sqlite", environment: ["HOME": "/home/r", "XDG_CONFIG_HOME": "/cfg"],
                                                currentDirectory: "/work")
                == ["/work/shelf/bookpipe.yaml", "/cfg/bookpipe/config.yaml"])
        #expect(ConfigurationLayers.searchPaths(libraryFlag: nil, environment: ["BOOKPIPE_LIBRARY": "/data/lib.sqlite", "XDG_CONFIG_HOME": "relative"],
                                                currentDirectory: "/work")
                == ["/data/bookpipe.yaml"])
    }
}
