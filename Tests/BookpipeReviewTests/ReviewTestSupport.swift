import BookpipeLibrary
import BookpipeReview
import BookpipeStore

extension ReviewQueue {
    /// The queue of the SQLite library at `libraryPath`, with its managed photo folder.
    init(libraryPath: String) throws {
        self.init(store: try LibraryStore(path: libraryPath), photos: ManagedPhotos(libraryPath: libraryPath))
    }
}
