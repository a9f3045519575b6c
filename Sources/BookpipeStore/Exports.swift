// The contract's values are the store's vocabulary: a module that opens the SQLite engine sees them too.
@_exported import BookpipeLibrary
