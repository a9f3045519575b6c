import Foundation
import Yams

/// A setting a configuration file can hold, with the flag and environment variable that win over it.
///
/// Every value is the text its flag would take (`sources: [catalog, openlibrary]` is the same as
/// `--sources catalog,openlibrary`), so a value from a file goes through the same checks as one typed.
public enum ConfigurationKey: String, CaseIterable, Sendable {
    /// The library file (`--library`, `BOOKPIPE_LIBRARY`).
    case library
    /// The local catalogue (`--catalog`, `BOOKPIPE_CATALOG`).
    case catalog
    /// The contact named in the User-Agent (`--contact`, `BOOKPIPE_CONTACT`).
    case contact
    /// The chain of metadata sources, in order (`--sources`).
    case sources
    /// Open Library's base URL (`--openlibrary-url`, `BOOKPIPE_OPENLIBRARY_URL`).
    case openLibraryURL = "openlibrary-url"
    /// Google Books' base URL (`--googlebooks-url`, `BOOKPIPE_GOOGLEBOOKS_URL`).
    case googleBooksURL = "googlebooks-url"
    /// How old a cached answer may be before it is asked again (`--max-cache-age`).
    case maxCacheAge = "max-cache-age"
    /// Requests per second to Open Library (`--openlibrary-rate`), instead of the pipeline file's.
    case openLibraryRate = "openlibrary-rate"
    /// Requests per second to Google Books (`--googlebooks-rate`), instead of the pipeline file's.
    case googleBooksRate = "googlebooks-rate"
    /// The vision backend of `bookpipe scan` (`--backend`, `BOOKPIPE_SCAN_URL`).
    case scanBackend = "scan-backend"

    /// What a value of the key must look like.
    public enum Kind: Sendable {
        /// A file path; relative paths are relative to the configuration file's folder, `~/` is the home folder.
        case path
        /// Any text that is not empty.
        case text
        /// An `http://` or `https://` URL.
        case url
        /// A list of known source names (a YAML list, or names separated by commas).
        case sourceList
        /// A duration such as `30d`, `12h`, `90m` (``DurationSyntax``).
        case duration
        /// A number of requests per second, more than 0 (`0.5` is one request every 2 s).
        case rate
    }

    /// The command-line flag that wins over the file.
    public var flag: String {
        self == .scanBackend ? "--backend" : "--" + rawValue
    }

    /// The environment variable that wins over the file, when there is one.
    public var environmentVariable: String? {
        switch self {
        case .library: return "BOOKPIPE_LIBRARY"
        case .catalog: return "BOOKPIPE_CATALOG"
        case .contact: return "BOOKPIPE_CONTACT"
        case .openLibraryURL: return "BOOKPIPE_OPENLIBRARY_URL"
        case .googleBooksURL: return "BOOKPIPE_GOOGLEBOOKS_URL"
        case .scanBackend: return "BOOKPIPE_SCAN_URL"
        case .sources, .maxCacheAge, .openLibraryRate, .googleBooksRate: return nil
        }
    }

    /// What a value must look like.
    public var kind: Kind {
        switch self {
        case .library, .catalog: return .path
        case .contact: return .text
        case .openLibraryURL, .googleBooksURL, .scanBackend: return .url
        case .sources: return .sourceList
        case .maxCacheAge: return .duration
        case .openLibraryRate, .googleBooksRate: return .rate
        }
    }

    /// The value when nothing sets one; nil: not set.
    public var defaultValue: String? {
        self == .library ? "library.sqlite" : nil
    }
}

/// One configuration file as read: each key's value (as a flag would take it) and where it is written.
///
/// ```yaml
/// # bookpipe.yaml, beside the library
/// catalog: ~/catalogs/openlibrary.sqlite
/// contact: mailto:me@example.org
/// sources: [catalog, openlibrary]
/// max-cache-age: 30d
/// ```
public struct ConfigurationFile: Sendable {
    /// One key's value and where it is written.
    public struct Entry: Sendable, Equatable {
        /// The value as its flag would take it (paths made absolute, lists joined with commas).
        public var value: String
        /// Where the key is written.
        public var location: SourceLocation
    }

    /// The file's path, as used in messages.
    public var path: String
    /// The keys the file sets.
    public var entries: [ConfigurationKey: Entry]

    /// Reads the file at `path`; nil when there is no file there.
    /// - Parameters:
    ///   - path: the file.
    ///   - knownSources: the source names `sources` may list.
    ///   - homeDirectory: what `~/` stands for in paths.
    /// - Throws: ``ConfigurationError`` when the file cannot be read or a key or value is wrong.
    public static func load(path: String, knownSources: [String], homeDirectory: String) throws(ConfigurationError) -> ConfigurationFile? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(location: SourceLocation(file: path, line: 1), message: "cannot read the file as UTF-8 text")
        }
        return try parse(text, path: path, knownSources: knownSources, homeDirectory: homeDirectory)
    }

    /// Parses configuration text.
    /// - Parameters:
    ///   - text: the YAML text: a mapping of keys to values (an empty file sets nothing).
    ///   - path: the file's path: messages name it, relative paths in it are relative to its folder.
    ///   - knownSources: the source names `sources` may list.
    ///   - homeDirectory: what `~/` stands for in paths.
    /// - Throws: ``ConfigurationError`` with the line and column of the first wrong key or value,
    ///   and the valid choices.
    public static func parse(_ text: String, path: String, knownSources: [String],
                             homeDirectory: String) throws(ConfigurationError) -> ConfigurationFile {
        let start = SourceLocation(file: path, line: 1, column: 1)
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            switch error {
            case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _):
                throw ConfigurationError(location: SourceLocation(file: path, line: mark.line, column: mark.column),
                                         message: "not valid YAML: \(problem)")
            default:
                throw ConfigurationError(location: start, message: "not valid YAML: \(error)")
            }
        } catch {
            throw ConfigurationError(location: start, message: "not valid YAML: \(error)")
        }
        guard let root else { return ConfigurationFile(path: path, entries: [:]) }
        func location(_ node: Node) -> SourceLocation {
            node.mark.map { SourceLocation(file: path, line: $0.line, column: $0.column) } ?? start
        }
        let keyNames = ConfigurationKey.allCases.map(\.rawValue)
        guard let mapping = root.mapping else {
            throw ConfigurationError(location: location(root), message: "a configuration file is a mapping of keys to values",
                                     suggestion: "write one 'key: value' a line; keys: \(keyNames.joined(separator: ", "))")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var entries: [ConfigurationKey: Entry] = [:]
        for (keyNode, valueNode) in mapping {
            let name = keyNode.string ?? ""
            guard let key = ConfigurationKey(rawValue: name) else {
                let closest = Suggestions.closest(to: name, among: keyNames).map { "did you mean '\($0)'? " } ?? ""
                throw ConfigurationError(location: location(keyNode), message: "unknown key '\(name)'",
                                         suggestion: closest + "valid keys: \(keyNames.joined(separator: ", "))")
            }
            let value = try checkedValue(valueNode, key: key, at: location(valueNode), folder: folder,
                                         knownSources: knownSources, homeDirectory: homeDirectory)
            entries[key] = Entry(value: value, location: location(keyNode))
        }
        return ConfigurationFile(path: path, entries: entries)
    }

    /// The value of `node` as `key`'s flag would take it, or an error saying what is expected.
    private static func checkedValue(_ node: Node, key: ConfigurationKey, at location: SourceLocation, folder: String,
                                     knownSources: [String], homeDirectory: String) throws(ConfigurationError) -> String {
        func scalar() throws(ConfigurationError) -> String {
            guard let scalar = node.scalar else {
                throw ConfigurationError(location: location, message: "'\(key.rawValue)' takes one value, not a list or a mapping")
            }
            let trimmed = scalar.string.trimmingCharacters(in: .whitespaces)
            // A plain `~`, `null` or nothing is YAML's null: no value.
            let isNull = scalar.style == .plain && ["", "~", "null", "Null", "NULL"].contains(trimmed)
            guard !isNull, !trimmed.isEmpty else {
                throw ConfigurationError(location: location, message: "'\(key.rawValue)' needs a value",
                                         suggestion: "give one, or remove the line")
            }
            return trimmed
        }
        switch key.kind {
        case .text:
            return try scalar()
        case .path:
            let text = try scalar()
            if text == "~" { return homeDirectory }
            if text.hasPrefix("~/") { return (homeDirectory as NSString).appendingPathComponent(String(text.dropFirst(2))) }
            if text.hasPrefix("/") || folder.isEmpty { return text }
            return (folder as NSString).appendingPathComponent(text)
        case .url:
            let text = try scalar()
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ConfigurationError(location: location, message: "'\(key.rawValue)' must be an http:// or https:// URL, not '\(text)'")
            }
            return text
        case .duration:
            let text = try scalar()
            guard DurationSyntax.parse(text) != nil else {
                throw ConfigurationError(location: location, message: "'\(key.rawValue)' must be a duration, not '\(text)'",
                                         suggestion: "for example 30d, 12h or 90m")
            }
            return text
        case .rate:
            let text = try scalar()
            guard RequestRate.parse(text) != nil else {
                throw ConfigurationError(location: location, message: "'\(key.rawValue)' must be a number of requests per second above 0, not '\(text)'",
                                         suggestion: "for example 3, or 0.5 for one request every 2 seconds")
            }
            return text
        case .sourceList:
            var names: [String]
            if let sequence = node.sequence {
                names = []
                for item in sequence {
                    guard let name = item.scalar?.string else {
                        throw ConfigurationError(location: location, message: "'sources' lists source names",
                                                 suggestion: "valid sources: \(knownSources.joined(separator: ", "))")
                    }
                    names.append(name.trimmingCharacters(in: .whitespaces))
                }
            } else {
                names = try scalar().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            }
            guard !names.isEmpty else {
                throw ConfigurationError(location: location, message: "'sources' needs at least one source",
                                         suggestion: "valid sources: \(knownSources.joined(separator: ", "))")
            }
            for name in names where !knownSources.contains(name) {
                let closest = Suggestions.closest(to: name, among: knownSources).map { "did you mean '\($0)'? " } ?? ""
                throw ConfigurationError(location: location, message: "unknown source '\(name)'",
                                         suggestion: closest + "valid sources: \(knownSources.joined(separator: ", "))")
            }
            return names.joined(separator: ",")
        }
    }
}

/// Reads a rate of requests per second (`3`, `0.5`).
public enum RequestRate {
    /// The rate, or nil when `text` is not a finite number above 0.
    public static func parse(_ text: String) -> Double? {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value > 0 else { return nil }
        return value
    }
}

/// Where an effective setting came from.
public enum SettingOrigin: Sendable, Equatable, CustomStringConvertible {
    /// A flag on the command line (`--catalog`).
    case flag(String)
    /// An environment variable (`BOOKPIPE_CATALOG`).
    case environment(String)
    /// A configuration file, at the line that sets it.
    case file(SourceLocation)
    /// Nothing set it: the built-in default (or no value).
    case builtIn

    /// `flag --catalog`, `env BOOKPIPE_CATALOG`, `/home/me/bookpipe.yaml:3`, `default`.
    public var description: String {
        switch self {
        case .flag(let flag): return "flag \(flag)"
        case .environment(let name): return "env \(name)"
        case .file(let location): return "\(location.file):\(location.line)"
        case .builtIn: return "default"
        }
    }
}

/// A setting's value and where it came from.
public struct EffectiveSetting: Sendable, Equatable {
    /// The setting.
    public var key: ConfigurationKey
    /// Its value; nil when nothing sets it and it has no default.
    public var value: String?
    /// Where the value came from.
    public var origin: SettingOrigin

    /// Creates a setting.
    public init(key: ConfigurationKey, value: String?, origin: SettingOrigin) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}

/// The settings of one run: flags, then environment variables, then configuration files in order,
/// then built-in defaults.
public struct ConfigurationLayers: Sendable {
    /// The name of the configuration file beside the library.
    public static let libraryFileName = "bookpipe.yaml"

    /// The files read, the first winning (the one beside the library, then the user's).
    public var files: [ConfigurationFile]
    /// The process's environment.
    public var environment: [String: String]

    /// Creates the layers from files already read.
    public init(files: [ConfigurationFile], environment: [String: String]) {
        self.files = files
        self.environment = environment
    }

    /// The files to read, first winning: `bookpipe.yaml` in the library's folder (the folder of
    /// `--library` or `$BOOKPIPE_LIBRARY` when given, else the current folder), then
    /// `$XDG_CONFIG_HOME/bookpipe/config.yaml` (`~/.config/bookpipe/config.yaml` when unset).
    /// - Parameters:
    ///   - libraryFlag: the `--library` value, when given.
    ///   - environment: the process's environment.
    ///   - currentDirectory: the current folder.
    /// - Returns: the paths, without duplicates; the files may not exist.
    public static func searchPaths(libraryFlag: String?, environment: [String: String],
                                   currentDirectory: String) -> [String] {
        func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
        var libraryFolder = currentDirectory
        if let library = nonEmpty(libraryFlag) ?? nonEmpty(environment["BOOKPIPE_LIBRARY"]) {
            let folder = (library as NSString).deletingLastPathComponent
            libraryFolder = folder.hasPrefix("/") ? folder : (currentDirectory as NSString).appendingPathComponent(folder)
        }
        var paths = [(libraryFolder as NSString).appendingPathComponent(libraryFileName)]
        let configHome = nonEmpty(environment["XDG_CONFIG_HOME"]).flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? nonEmpty(environment["HOME"]).map { ($0 as NSString).appendingPathComponent(".config") }
        if let configHome {
            let user = (configHome as NSString).appendingPathComponent("bookpipe/config.yaml")
            if (user as NSString).standardizingPath != (paths[0] as NSString).standardizingPath { paths.append(user) }
        }
        return paths
    }

    /// Reads the files at ``searchPaths(libraryFlag:environment:currentDirectory:)`` that exist.
    /// - Throws: ``ConfigurationError`` from the first file with a problem.
    public static func load(libraryFlag: String?, environment: [String: String], currentDirectory: String,
                            knownSources: [String]) throws(ConfigurationError) -> ConfigurationLayers {
        let home = environment["HOME"] ?? NSHomeDirectory()
        var files: [ConfigurationFile] = []
        for path in searchPaths(libraryFlag: libraryFlag, environment: environment, currentDirectory: currentDirectory) {
            if let file = try ConfigurationFile.load(path: path, knownSources: knownSources, homeDirectory: home) {
                files.append(file)
            }
        }
        return ConfigurationLayers(files: files, environment: environment)
    }

    /// The effective value of `key`: the flag when given, then the environment variable (when set
    /// and not empty), then the first file that sets it, then the default.
    /// - Parameter flag: the flag's value on this command line, if given.
    public func resolve(_ key: ConfigurationKey, flag: String?) -> EffectiveSetting {
        if let flag, !flag.trimmingCharacters(in: .whitespaces).isEmpty {
            return EffectiveSetting(key: key, value: flag, origin: .flag(key.flag))
        }
        if let name = key.environmentVariable, let value = environment[name],
           !value.trimmingCharacters(in: .whitespaces).isEmpty {
            return EffectiveSetting(key: key, value: value, origin: .environment(name))
        }
        for file in files {
            if let entry = file.entries[key] {
                return EffectiveSetting(key: key, value: entry.value, origin: .file(entry.location))
            }
        }
        return EffectiveSetting(key: key, value: key.defaultValue, origin: .builtIn)
    }
}

/// A wrong key or value in a configuration file, pointing at `file:line:column`.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    /// Where the problem is.
    public var location: SourceLocation
    /// What is wrong.
    public var message: String
    /// The valid choices or what to do instead, when known.
    public var suggestion: String?

    /// Creates an error.
    public init(location: SourceLocation, message: String, suggestion: String? = nil) {
        self.location = location
        self.message = message
        self.suggestion = suggestion
    }

    /// `file:line:column: error: message` and, on a second line, the valid choices.
    public var description: String {
        var text = "\(location): error: \(message)"
        if let suggestion { text += "\n  \(suggestion)" }
        return text
    }
}
