import ArgumentParser
import Foundation

@main
struct Bookpipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bookpipe",
        abstract: "Turns messy book lists into a clean, enriched library.",
        discussion: "Exit codes: 0 ok, 1 run failed, 2 usage, 130 interrupted (run the same command again to resume).",
        version: "0.1.0",
        subcommands: [ImportCommand.self, ImportScanCommand.self, ReviewCommand.self, EnrichCommand.self, ExportCommand.self, RunCommand.self, PipelinesCommand.self,
                      CatalogCommand.self, ImageCommand.self, ReportCommand.self, SearchCommand.self, ShowCommand.self])

    /// Usage errors exit with 2 (DESIGN.md §6), not ArgumentParser's 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Options every library command takes.
struct LibraryOptions: ParsableArguments {
    @Option(name: .long, help: "The library file (default ./library.sqlite, or $BOOKPIPE_LIBRARY).")
    var library: String?

    var libraryPath: String {
        library ?? ProcessInfo.processInfo.environment["BOOKPIPE_LIBRARY"] ?? "library.sqlite"
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

