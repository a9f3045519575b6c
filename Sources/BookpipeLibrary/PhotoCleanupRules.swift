import BookpipeCore
import Foundation

/// When a managed photo copy may go, and the clean-up that deletes it: plain Swift over what the
/// library says about the detections naming each copy. Engines store and look up; they do not
/// decide.
public enum PhotoCleanupRules {
    /// A copy is due for deletion when at least one detection names it and none of them can still
    /// come to the review queue: each is reviewed (`verified` or `userEdited`) and its lookup is
    /// answered (`enriched` or `notFound`). A detection verified before `enrich` ran is `pending`,
    /// and the match enrichment may queue for it needs the crop; `failed` is looked up again;
    /// `needsCandidateSelection` is queued. A copy no detection names is left alone (it may belong
    /// to an import still running).
    public static func isDue(_ states: [DetectionState]) -> Bool {
        !states.isEmpty && states.allSatisfy { state in
            (state.reviewStatus == .verified || state.reviewStatus == .userEdited)
                && (state.status == .enriched || state.status == .notFound)
        }
    }

    /// Deletes the managed copies of photos whose detections are all settled (``isDue(_:)``) and
    /// clears those detections' photo path and box; deletes that failed before are retried. Only
    /// the managed folder is touched, never the user's original photo.
    ///
    /// Cheap when there is nothing to do: with no managed copies and no pending delete, only the
    /// folder is listed; with copies, the library is asked once about the detections naming them.
    /// - Parameters:
    ///   - library: The library.
    ///   - photos: Its managed folder.
    /// - Returns: What was deleted and what failed (log it; it is retried next time).
    /// - Throws: ``StoreError`` when the library cannot be read or written.
    public static func cleanUp(_ library: any LibraryReviewStore, photos: ManagedPhotos) async throws(StoreError) -> PhotoCleanup {
        try await cleanUp(library, storedNames: (try? photos.storedNames()) ?? []) { name throws(ManagedPhotoError) in
            _ = try photos.delete(named: name)
        }
    }

    /// The clean-up over any engine's copies: `storedNames` are the copies there are; of these, the
    /// due ones are released (``LibraryReviewStore/releaseDetectionPhotos(names:isDue:)``, which
    /// checks again inside its transaction; an engine keeping copies in the database deletes them
    /// right there), then `delete` is called for each released or earlier pending copy (a file;
    /// nothing left to do for a copy deleted in the transaction).
    /// - Parameters:
    ///   - library: The library.
    ///   - storedNames: The names of the managed copies stored.
    ///   - delete: Deletes one copy after its detections let it go; throws to retry later.
    /// - Returns: What was deleted and what failed.
    /// - Throws: ``StoreError`` when the library cannot be read or written.
    public static func cleanUp(_ library: any LibraryReviewStore, storedNames stored: [String],
                               delete: (String) throws(ManagedPhotoError) -> Void) async throws(StoreError) -> PhotoCleanup {
        var names = try await library.pendingPhotoDeletions()
        if !stored.isEmpty {
            let states = try await library.detectionStates(photoNames: stored)
            let candidates = stored.filter { isDue(states[$0] ?? []) }
            if !candidates.isEmpty {
                // Checked again inside the write: a detection queued meanwhile keeps its photo.
                names = try await library.releaseDetectionPhotos(names: candidates, isDue: isDue)
            }
        }
        var cleanup = PhotoCleanup()
        var failed: [(name: String, reason: String)] = []
        for name in names {
            do {
                try delete(name)
                cleanup.deleted.append(name)
            } catch {
                cleanup.failures.append(error.description)
                failed.append((name, error.description))
            }
        }
        guard !names.isEmpty else { return cleanup }
        try await library.recordPhotoDeletions(deleted: cleanup.deleted, failed: failed)
        return cleanup
    }
}

/// What the photo clean-up needs to know of one detection naming a managed copy.
public struct DetectionState: Sendable, Hashable {
    /// Whether a person has reviewed it.
    public var reviewStatus: ReviewStatus
    /// Where its lookup stands.
    public var status: RecordStatus

    /// Creates a state.
    public init(reviewStatus: ReviewStatus, status: RecordStatus) {
        self.reviewStatus = reviewStatus
        self.status = status
    }
}
