/// Work that goes on beside a pipeline's steps for as long as they run — a claim's heartbeat.
///
/// A run resource (``StageResources``) that conforms is started by ``PipelineRunner`` as a child
/// task of the run, after every stage's ``Stage/start(in:)``, and cancelled once every step has
/// finished (or the run failed or was cancelled), before the stages' ``Stage/end(_:in:)``.
public protocol RunCompanion: Sendable {
    /// Runs until cancelled; returns soon after cancellation. It cannot fail the run: what goes
    /// wrong is its own to report (through `context.progress`).
    func accompany(in context: StageContext) async
}

extension StageResources {
    /// The resources that go on beside the steps (``RunCompanion``), in no particular order.
    public var companions: [any RunCompanion] {
        allValues.compactMap { $0 as? any RunCompanion }
    }
}
