import BookpipeLibrary
import BookpipeReview
import BookpipeStore

extension ReviewQueue {
    /// The queue of the SQLite library at `libraryPath`.
    init(libraryPath: String) throws {
        self.init(store: try LibraryStore(path: libraryPath))
    }

    /// The SQLite library's managed photo folder (its copies are files the tests reach into).
    var photos: ManagedPhotos { ManagedPhotos(libraryPath: store.location) }
}
