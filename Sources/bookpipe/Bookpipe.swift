import ArgumentParser
import Foundation

@main
struct Bookpipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookpipe",
        abstract: "Turns messy book lists into a clean, enriched library.",
        discussion: "Exit codes: 0 ok, 1 run failed, 2 usage, 130 interrupted (run the same command again to resume).",
        version: "0.1.0",
        subcommands: [ImportCommand.self, ImportScanCommand.self, ScanCommand.self, ReviewCommand.self, EnrichCommand.self, ExportCommand.self,
                      StatsCommand.self, RejectedCommand.self, RunCommand.self, PipelinesCommand.self, CatalogCommand.self,
                      ImageCommand.self, ReportCommand.self, SearchCommand.self, ShowCommand.self, BackupCommand.self,
                      ListCommand.self, RemoveCommand.self, ForgetCommand.self, LinkCommand.self, UnlinkCommand.self, ConfigCommand.self, CompletionCommand.self])

    /// Usage errors exit with 2 (DESIGN.md §6), not ArgumentParser's 64, and show the usage of the
    /// command that was run (`bookpipe import`'s, not `bookpipe`'s). A command group run without a
    /// subcommand (bare `bookpipe`, `bookpipe image`) prints its help to standard error and exits 2.
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .validationFailure {
                // A command's validate() may have read a setting the broken file would have given.
                if case .failure(let problem) = LoadedConfiguration.result { usageFailure(problem.description) }
                usageFailure(usageErrorText(for: error))
            }
            exit(withError: error)
        }
        // A configuration file with a wrong key or value stops every command that may read it.
        if !(command is CompletionCommand), case .failure(let problem) = LoadedConfiguration.result {
            usageFailure(problem.description)
        }
        let commandType = type(of: command)
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let clean as CleanExit where !(commandType.configuration.subcommands.isEmpty) {
            // A group's run() only asks for its help: it was run without a subcommand.
            _ = clean
            usageFailure(helpMessage(for: commandType))
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let name = commandPath(to: commandType).joined(separator: " ")
            usageFailure("Error: \(message(for: error))\nUsage: \(usageString(for: commandType))\n"
                         + "  See '\(name) --help' for more information.")
        }
    }

    /// ArgumentParser's message for a rejected command line, with "did you mean" for a misspelt
    /// command (and the usage of the group it was looked for in) or option.
    private static func usageErrorText(for error: any Error) -> String {
        let text = fullMessage(for: error)
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let finding = UsageSuggestions.finding(for: arguments, parserMessage: text) else { return text }
        if let group = finding.group {
            var type: any ParsableCommand.Type = Bookpipe.self
            for name in group {
                guard let next = type.configuration.subcommands.first(where: { ($0.configuration.commandName ?? $0._commandName) == name })
                else { break }
                type = next
            }
            let name = commandPath(to: type).joined(separator: " ")
            return "\(finding.line)\nUsage: \(usageString(for: type))\n  See '\(name) --help' for more information."
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if !lines.isEmpty { lines[0] = Substring(finding.line) }
        return lines.joined(separator: "\n")
    }

    /// Prints `text` to standard error and exits with 2.
    private static func usageFailure(_ text: String) -> Never {
        FileHandle.standardError.write(Data((text.hasSuffix("\n") ? text : text + "\n").utf8))
        Foundation.exit(2)
    }

    /// `["bookpipe", "image", "prepare"]` for ``ImageCommand/Prepare``.
    static func commandPath(to target: any ParsableCommand.Type) -> [String] {
        func search(_ type: any ParsableCommand.Type, _ path: [String]) -> [String]? {
            let here = path + [type.configuration.commandName ?? type._commandName]
            if type == target { return here }
            for subcommand in type.configuration.subcommands {
                if let found = search(subcommand, here) { return found }
            }
            return nil
        }
        return search(Bookpipe.self, []) ?? ["bookpipe"]
    }
}

/// Options every library command takes.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: "The library file (default $BOOKPIPE_LIBRARY, the configuration file's, or ./library.sqlite).")
    var library: String?

    /// `--library`, `$BOOKPIPE_LIBRARY`, the configuration file's `library`, or `library.sqlite`.
    var libraryPath: String {
        LoadedConfiguration.value(.library, flag: library) ?? "library.sqlite"
    }
}

enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
    case auto, bar, json, none

    /// How progress is drawn: `auto` is a bar on a terminal and nothing otherwise.
    enum Style { case bar, json, none }

    /// The style this mode means here.
    var style: Style {
        switch self {
        case .auto: return isatty(2) != 0 ? .bar : .none
        case .bar: return .bar
        case .json: return .json
        case .none: return .none
        }
    }
}

