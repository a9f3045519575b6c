import ArgumentParser
import BookpipePipeline
import Foundation

/// "Did you mean" for a command line ArgumentParser rejected: a misspelt command (`bookpipe imprt`)
/// or option (`--no-enrichment`), found by walking the arguments over the command tree.
///
/// The tree comes from ArgumentParser's own description of the commands (the JSON of
/// `bookpipe --experimental-dump-help`, produced in-process), so every name, alias and option
/// declared anywhere is known without a list kept by hand.
enum UsageSuggestions {
    /// The part of ArgumentParser's tool description read here (its `ToolInfoV0` format).
    struct CommandInfo: Decodable {
        struct Argument: Decodable {
            struct Name: Decodable {
                var kind: String
                var name: String
            }
            var kind: String
            var names: [Name]?
            var shouldDisplay: Bool?
        }
        var commandName: String
        var aliases: [String]?
        var defaultSubcommand: String?
        var subcommands: [CommandInfo]?
        var arguments: [Argument]?

        /// The command's name and aliases.
        var allNames: [String] { [commandName] + (aliases ?? []) }

        /// `--name`, `-n` and `-name` spellings of its options and flags.
        var optionSpellings: [String] {
            (arguments ?? []).filter { $0.kind != "positional" }.flatMap { argument in
                (argument.names ?? []).map { $0.kind == "long" ? "--" + $0.name : "-" + $0.name }
            }
        }

        /// Whether `spelling` (`--format`) names an option that takes a value.
        func takesValue(_ spelling: String) -> Bool {
            (arguments ?? []).contains { argument in
                argument.kind == "option"
                    && (argument.names ?? []).contains { ($0.kind == "long" ? "--" + $0.name : "-" + $0.name) == spelling }
            }
        }
    }

    private struct ToolInfo: Decodable {
        var command: CommandInfo
    }

    /// A misspelt command or option and the closest name.
    struct Finding: Equatable {
        /// The line that replaces ArgumentParser's `Error: …` line.
        var line: String
        /// For an unknown command, the names of the group it was looked for in (`["review"]`;
        /// `[]` for the top level), whose usage is the one to show.
        var group: [String]?
    }

    /// The first misspelt command or option in `arguments`; nil when there is none or
    /// ArgumentParser complained about something else.
    /// - Parameters:
    ///   - arguments: the command line without the program name.
    ///   - parserMessage: ArgumentParser's message, so the suggestion is only given for the
    ///     argument it rejected.
    static func finding(for arguments: [String], parserMessage: String) -> Finding? {
        guard let root = commandTree() else { return nil }
        return finding(for: arguments, root: root, parserMessage: parserMessage)
    }

    /// The tree of commands, from ArgumentParser's own description of them.
    static func commandTree() -> CommandInfo? {
        do {
            _ = try Bookpipe.parseAsRoot(["--experimental-dump-help"])
            return nil
        } catch {
            let json = Bookpipe.fullMessage(for: error)
            guard let tree = try? JSONDecoder().decode(ToolInfo.self, from: Data(json.utf8)).command else { return nil }
            return withDefaultSubcommands(tree, type: Bookpipe.self)
        }
    }

    /// The description does not name default subcommands (`bookpipe review` runs `review walk`):
    /// they are taken from the command types.
    private static func withDefaultSubcommands(_ info: CommandInfo, type: any ParsableCommand.Type) -> CommandInfo {
        func name(_ type: any ParsableCommand.Type) -> String { type.configuration.commandName ?? type._commandName }
        var info = info
        info.defaultSubcommand = info.defaultSubcommand ?? type.configuration.defaultSubcommand.map(name)
        info.subcommands = info.subcommands?.map { child in
            guard let childType = type.configuration.subcommands.first(where: { name($0) == child.commandName }) else { return child }
            return withDefaultSubcommands(child, type: childType)
        }
        return info
    }

    /// ``finding(for:parserMessage:)`` over a given tree.
    static func finding(for arguments: [String], root: CommandInfo, parserMessage: String) -> Finding? {
        var command = root
        var path: [String] = []
        var positionalsHere = 0
        var index = 0
        let builtIn = ["--help", "-h", "--version", "--experimental-dump-help", "--generate-completion-script"]
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { return nil }
            if argument.hasPrefix("-"), argument.count > 1, Double(argument) == nil {
                let spelling = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                // A group run without a subcommand name runs its default one, with its options.
                let defaultOptions = (command.subcommands ?? []).first { $0.commandName == command.defaultSubcommand }?.optionSpellings ?? []
                let known = command.optionSpellings + defaultOptions + builtIn
                if known.contains(spelling) {
                    if command.takesValue(spelling), !argument.contains("=") { index += 1 }
                    continue
                }
                // A bundle of short flags (-xy) or an option of a default subcommand: not judged here.
                guard spelling.hasPrefix("--"), parserMessage.contains("Unknown option '\(spelling)'") else { return nil }
                let longOptions = known.filter { $0.hasPrefix("--") }
                return Finding(line: "error: unknown option '\(spelling)'"
                    + (Suggestions.closest(to: spelling, among: longOptions).map { "; did you mean '\($0)'?" } ?? ""))
            }
            let subcommands = command.subcommands ?? []
            if let next = subcommands.first(where: { $0.allNames.contains(argument) }), positionalsHere == 0 {
                path.append(next.commandName)
                command = next
                continue
            }
            if !subcommands.isEmpty, positionalsHere == 0, parserMessage.contains("'\(argument)'") {
                let names = subcommands.flatMap(\.allNames)
                let prefix = path.map { $0 + " " }.joined()
                return Finding(line: "error: unknown command '\(prefix)\(argument)'"
                    + (Suggestions.closest(to: argument, among: names).map { "; did you mean '\(prefix)\($0)'?" } ?? ""),
                    group: path)
            }
            positionalsHere += 1
        }
        return nil
    }
}
