import Foundation
import Testing

/// Every command's `--help` reads cleanly.
@Suite(.timeLimit(.minutes(5))) struct HelpTextTests {
    /// Every command path (`[]`, `["review"]`, `["review", "list"]`, …), from the binary's own
    /// description of its commands.
    static func commandPaths(in directory: URL) throws -> [[String]] {
        let dump = try CLI.run(["--experimental-dump-help"], in: directory)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var paths: [[String]] = []
        func walk(_ command: [String: Any], _ path: [String]) {
            paths.append(path)
            for case let child as [String: Any] in command["subcommands"] as? [Any] ?? [] {
                guard let name = child["commandName"] as? String, name != "help" else { continue }
                walk(child, path + [name])
            }
        }
        walk(try #require(root["command"] as? [String: Any]), [])
        return paths
    }

    /// The prose of a help text: the overview and discussion, and the help of each option,
    /// argument and subcommand without the name column before it. The usage line, and the spaces
    /// that align the option table, are not prose.
    static func prose(ofHelp help: String) -> [String] {
        var prose: [String] = []
        var inTable = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("USAGE:") { inTable = false; continue }
            if ["OPTIONS:", "ARGUMENTS:", "SUBCOMMANDS:", "OPTION GROUP"].contains(where: { line.hasPrefix($0) })
                || (line.hasSuffix(":") && line == line.uppercased() && !line.hasPrefix(" ")) {
                inTable = true
                continue
            }
            if line.hasPrefix("  See '") { continue }
            var text = line
            if inTable, line.hasPrefix("  "), !line.hasPrefix("   ") {
                // An entry: its name, then the gap that aligns the help column, then the help.
                guard let gap = line.dropFirst(2).range(of: "  ") else { continue }
                text = String(line[gap.upperBound...])
            }
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty { prose.append(trimmed) }
        }
        return prose
    }

    @Test("The prose check sees a run of spaces in a sentence but not the option table's alignment")
    func proseCheck() {
        let help = """
            OVERVIEW: Imports things.

            Photos are copied into     the folder.

            USAGE: bookpipe x [<options>]

            OPTIONS:
              --photo <photo>         The shelf photo,  twice.
              --no-enrich             Fine.
              --a-very-long-option-name <value>
                                      Continued  here.
            """
        #expect(Self.prose(ofHelp: help).filter { $0.contains("  ") }
                == ["Photos are copied into     the folder.", "The shelf photo,  twice.", "Continued  here."])
    }

    @Test("No line of any command's help has two spaces in a row inside its prose")
    func noRunsOfSpaces() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try Self.commandPaths(in: directory)
        #expect(paths.count > 30, "\(paths)")
        var problems: [String] = []
        for path in paths {
            let result = try CLI.run(path + ["--help"], in: directory)
            #expect(result.status == 0, "\(path): \(result.stderr)")
            for line in Self.prose(ofHelp: result.stdout) where line.contains("  ") {
                problems.append("bookpipe \(path.joined(separator: " ")) --help: \(line)")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}
