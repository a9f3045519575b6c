import ArgumentParser
import BookpipePipeline
import BookpipeStages
import Foundation

/// The configuration files of this run (`bookpipe.yaml` beside the library, then the user's),
/// read once; the options fall back to them (docs/command-line.md).
enum LoadedConfiguration {
    /// The layers, or the first problem in a file. Read on first use; `Bookpipe.main` checks it
    /// before a command runs, so a command only meets the success case.
    static let result: Result<ConfigurationLayers, ConfigurationError> = {
        let environment = ProcessInfo.processInfo.environment
        do throws(ConfigurationError) {
            return .success(try ConfigurationLayers.load(
                libraryFlag: libraryFlag(in: Array(CommandLine.arguments.dropFirst())), environment: environment,
                currentDirectory: FileManager.default.currentDirectoryPath, knownSources: SourceChain.knownSources))
        } catch {
            return .failure(error)
        }
    }()

    /// The layers (no files when one has a problem: `Bookpipe.main` stops the run before that matters).
    static var layers: ConfigurationLayers {
        (try? result.get()) ?? ConfigurationLayers(files: [], environment: ProcessInfo.processInfo.environment)
    }

    /// The effective value of `key` given the flag's value.
    static func value(_ key: ConfigurationKey, flag: String?) -> String? {
        layers.resolve(key, flag: flag).value
    }

    /// The value of `--library` on a command line the parser accepted (`--library X` or `--library=X`).
    static func libraryFlag(in arguments: [String]) -> String? {
        var found: String?
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--library", index + 1 < arguments.count {
                found = arguments[index + 1]
                index += 1
            } else if argument.hasPrefix("--library=") {
                found = String(argument.dropFirst("--library=".count))
            }
            index += 1
        }
        return found
    }
}

/// `bookpipe config`: each setting's effective value and where it came from.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Shows each setting's effective value and where it came from (flag, env, file:line or default).",
        discussion: """
            Settings are read from bookpipe.yaml beside the library (the folder of --library or $BOOKPIPE_LIBRARY, \
            else the current folder), then from $XDG_CONFIG_HOME/bookpipe/config.yaml (~/.config when unset). \
            Flags and environment variables win over both. Keys: \(ConfigurationKey.allCases.map(\.rawValue).joined(separator: ", ")). \
            See docs/command-line.md.
            """)

    @Flag(help: "One JSON object per setting and line: key, value (absent when not set), origin.")
    var json = false

    @OptionGroup var library: LibraryOptions

    @OptionGroup var sources: EnrichmentOptionGroup

    @Option(help: "The vision backend's base URL, as `bookpipe scan` takes it.")
    var backend: String?

    func run() async throws {
        let layers = LoadedConfiguration.layers
        let flags: [ConfigurationKey: String?] = [
            .library: library.library, .catalog: sources.catalog, .contact: sources.contact, .sources: sources.sources,
            .openLibraryURL: sources.openLibraryURL, .googleBooksURL: sources.googleBooksURL,
            .maxCacheAge: sources.maxCacheAge, .scanBackend: backend,
            .openLibraryRate: sources.openLibraryRate, .googleBooksRate: sources.googleBooksRate,
        ]
        let settings = ConfigurationKey.allCases.map { layers.resolve($0, flag: flags[$0] ?? nil) }
        if json {
            for setting in settings {
                var object: [String: Any] = ["key": setting.key.rawValue, "origin": setting.origin.description]
                if let value = setting.value { object["value"] = value }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        let searched = ConfigurationLayers.searchPaths(
            libraryFlag: LoadedConfiguration.libraryFlag(in: Array(CommandLine.arguments.dropFirst())),
            environment: layers.environment, currentDirectory: FileManager.default.currentDirectoryPath)
        let read = Set(layers.files.map(\.path))
        print("configuration files, the first winning:")
        for path in searched { print("  \(path) (\(read.contains(path) ? "read" : "none there"))") }
        let keyWidth = settings.map(\.key.rawValue.count).max() ?? 0
        let values = settings.map { $0.value ?? "(not set)" }
        let valueWidth = values.map(\.count).max() ?? 0
        for (setting, value) in zip(settings, values) {
            let key = setting.key.rawValue.padding(toLength: keyWidth, withPad: " ", startingAt: 0)
            print("\(key)  \(value.padding(toLength: valueWidth, withPad: " ", startingAt: 0))  \(setting.origin)")
        }
    }
}
