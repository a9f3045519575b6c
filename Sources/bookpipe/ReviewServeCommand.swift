import ArgumentParser
import BookpipeCatalog
import BookpipeReview
import BookpipeReviewServer
import Foundation

extension ReviewCommand {
    /// `bookpipe review serve`: parses, opens the library (and the catalogue when there is one) and
    /// runs ``ReviewServer``; the server's rules live in BookpipeReviewServer.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serves the review queue as a web page on 127.0.0.1, keyboard first (docs/decisions/0023).",
            discussion: """
                The first line on standard output is the address with a random token: only who can read it \
                can see or decide the queue. Keys: v verify, e edit, 1–5 choose, n none, s skip, u undo, \
                j/k move, b bulk, / search the local catalogue. Ctrl-C stops; the photo cleanup runs then.
                """)
        @Option(help: "The port on 127.0.0.1; 0 picks a free one.") var port = 0
        @Flag(help: "Open the page in the desktop's browser (xdg-open).") var open = false
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var library: LibraryOptions

        func validate() throws {
            if port < 0 || port > 65_535 { throw ValidationError("--port must be 0…65535, not \(port).") }
        }

        func run() async throws {
            let queue = try await ReviewCommand.open(library)
            let search = Self.catalogueSearch(path: catalog.catalogPath)
            let server = ReviewServer(queue: queue, search: search)
            let app = server.application(port: port) { bound in
                let url = server.url(port: bound)
                // Written straight to the file descriptor: the first line, at once, whatever buffers stdout.
                FileHandle.standardOutput.write(Data((url + "\n").utf8))
                printError("Serving the review queue of \(library.libraryPath) on 127.0.0.1:\(bound)"
                           + (search == nil ? " (no local catalogue: / cannot search)" : "") + "; Ctrl-C stops.")
                if open { Self.openInBrowser(url) }
            }
            do {
                try await app.runService()
            } catch {
                printError("error: \(error)")
                for warning in await queue.cleanUp() { printError(warning) }
                try? await queue.store.close()
                throw ExitCode(1)
            }
            for warning in await queue.cleanUp() { printError(warning) }
            try? await queue.store.close()
        }

        /// The catalogue's title search for `/`, when the catalogue file exists.
        static func catalogueSearch(path: String) -> (@Sendable (String) async throws -> [CatalogueHit])? {
            guard FileManager.default.fileExists(atPath: path), let catalog = try? LocalCatalog(path: path) else { return nil }
            return { text in
                try catalog.search(title: text, author: nil, limit: 10).map {
                    CatalogueHit(title: $0.title, authors: $0.authors, year: $0.year, workKey: $0.workKey)
                }
            }
        }

        /// Opens `url` with xdg-open, or says that it is missing.
        static func openInBrowser(_ url: String) {
            let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            guard let opener = paths.map({ "\($0)/xdg-open" }).first(where: FileManager.default.isExecutableFile(atPath:)) else {
                printError("--open: xdg-open is not installed (Debian: xdg-utils); open the address above in a browser.")
                return
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: opener)
            process.arguments = [url]
            do { try process.run() } catch { printError("--open: \(opener) failed: \(error)") }
        }
    }
}
