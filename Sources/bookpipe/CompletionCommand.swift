import ArgumentParser

/// `bookpipe completion SHELL`: prints the shell completion script ArgumentParser generates.
struct CompletionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "completion",
        abstract: "Prints the completion script for bash, zsh or fish.",
        discussion: """
            bash: bookpipe completion bash > ~/.local/share/bash-completion/completions/bookpipe. \
            zsh: bookpipe completion zsh > ~/.zfunc/_bookpipe (with fpath+=~/.zfunc before compinit in ~/.zshrc). \
            fish: bookpipe completion fish > ~/.config/fish/completions/bookpipe.fish. See docs/command-line.md.
            """)

    /// The shells ArgumentParser writes scripts for.
    enum Shell: String, ExpressibleByArgument, CaseIterable {
        case bash, zsh, fish
    }

    @Argument(help: "bash, zsh or fish.")
    var shell: Shell

    func run() throws {
        guard let completionShell = CompletionShell(rawValue: shell.rawValue) else { throw ExitCode(2) }
        print(Bookpipe.completionScript(for: completionShell), terminator: "")
    }
}
