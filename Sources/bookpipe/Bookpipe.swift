import ArgumentParser

@main
struct Bookpipe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bookpipe", abstract: "Turns messy book lists into a clean, enriched library.")
}
