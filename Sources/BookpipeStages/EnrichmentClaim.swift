import BookpipeCore
import BookpipeLibrary
import BookpipePipeline
import Foundation

/// The claim an enrichment run holds on the records it works on (``LibraryClaims``): its owner,
/// its lease, and the heartbeat that keeps the lease while the run goes on.
///
/// A run resource: `library-records` claims the records it selects with ``owner``;
/// `save-enrichment` saves fenced by it (a record another run took after this run's lease
/// expired is not written) and releases each record's claim as it saves it; when the run ends,
/// however it ends, what is left is released. While the steps run, ``accompany(in:)`` renews the
/// lease every ``heartbeat`` (the runner starts it, see ``RunCompanion``), so a long run keeps
/// its records; a run killed with `kill -9` stops renewing, and another run takes its records
/// once the lease has run out — at once when the killed run was a process of this host.
public struct EnrichmentClaim: RunCompanion {
    /// Who claims: this run of this process.
    public let owner: ClaimOwner
    /// How long a claim lasts without a heartbeat.
    public let lease: Duration
    /// How often the lease is renewed while the run goes on.
    public let heartbeat: Duration

    /// Creates the claim of a run.
    /// - Parameters:
    ///   - command: The command line (shown to other runs: "being enriched by another run (pid …)").
    ///   - lease: How long a claim lasts without a heartbeat (30 s).
    ///   - heartbeat: How often it is renewed (a third of the lease).
    public init(command: String, lease: Duration = .seconds(30), heartbeat: Duration? = nil) {
        owner = ClaimOwner.thisProcess(command: command)
        self.lease = lease
        self.heartbeat = heartbeat ?? lease / 3
    }

    /// Renews the lease every ``heartbeat`` until cancelled. A lease found taken over is said once
    /// (this run's later results for those records are not written; the other run's stand).
    public func accompany(in context: StageContext) async {
        guard let library = context.resource((any Library).self) else { return }
        var toldLost = false
        while !Task.isCancelled {
            do {
                try await context.clock.sleep(for: heartbeat)
            } catch {
                return
            }
            guard let renewed = try? await library.renewClaims(owner: owner, lease: lease) else { continue }
            if !renewed && !toldLost {
                toldLost = true
                context.progress.emit(.message(
                    "This run's claim on its records lapsed and other runs may take them; their results win."))
            }
        }
    }
}

extension StageResources {
    /// Returns a copy holding `library` as the run's library, whatever engine it is: stages ask
    /// for it as `any Library` (``StageContext/resource(_:)`` with `(any Library).self`).
    public func adding(_ library: some Library) -> StageResources {
        adding(library as any Library)
    }
}
