import BookpipeCore
import BookpipeLibrary
import Foundation

/// The SQLite engine implements the library contract. Most requirements are the engine's own
/// methods (synchronous where SQLite answers at once, which satisfies the contract's `async`).
extension LibraryStore: Library {
    /// The library file's path.
    public var location: String { path }
}
