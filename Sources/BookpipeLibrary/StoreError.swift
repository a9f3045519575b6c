import Foundation

/// A failure of the library database.
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The file could not be opened as a library.
    case cannotOpen(path: String, reason: String)
    /// The folder that should hold the library does not exist; nothing was created.
    case missingFolder(path: String, folder: String)
    /// The file is not a database, or SQLite found its contents damaged ("file is not a
    /// database", "database disk image is malformed").
    case damaged(path: String, reason: String)
    /// The schema could not be brought up to date (the file is unchanged).
    case migrationFailed(path: String, reason: String)
    /// A write failed; its transaction was rolled back.
    case writeFailed(path: String, what: String, reason: String)
    /// A read failed.
    case readFailed(path: String, what: String, reason: String)
    /// A stored value could not be decoded.
    case corruptValue(path: String, what: String)

    /// A message for people.
    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            return "\(path): cannot open the library: \(reason). Check the path and permissions, or pass another --library."
        case .missingFolder(let path, let folder):
            return "\(path): cannot create the library: the folder \(folder) does not exist. "
                + "Create it (mkdir -p \(folder)), or pass another --library."
        case .damaged(let path, let reason):
            return "\(path): the library is damaged or is not a bookpipe library (\(reason)). " + Self.damageAdvice
        case .migrationFailed(let path, let reason):
            return "\(path): cannot update the library's schema: \(reason). The file was left unchanged."
        case .writeFailed(let path, let what, let reason):
            if Self.isDamage(reason) { return "\(path): could not store \(what): the library is damaged (\(reason)). " + Self.damageAdvice }
            return "\(path): could not store \(what): \(reason). Nothing of this batch was written; rows stored before are kept."
        case .readFailed(let path, let what, let reason):
            if Self.isDamage(reason) { return "\(path): could not read \(what): the library is damaged (\(reason)). " + Self.damageAdvice }
            return "\(path): could not read \(what): \(reason)."
        case .corruptValue(let path, let what):
            return "\(path): a stored value of \(what) cannot be read; the library may have been edited by hand."
        }
    }

    /// True when the failure comes from a damaged library (or a file that is not a database):
    /// no retry helps; the library must be restored or rebuilt.
    public var isDamage: Bool {
        switch self {
        case .damaged: return true
        case .cannotOpen(_, let reason), .migrationFailed(_, let reason), .writeFailed(_, _, let reason),
             .readFailed(_, _, let reason):
            return Self.isDamage(reason)
        case .missingFolder, .corruptValue: return false
        }
    }

    /// What to do about a damaged library: the same advice wherever the damage shows.
    static let damageAdvice = "Restore it from a copy (a backup, or the file from before it broke), or move it aside "
        + "and import your exports again into a new library."

    /// True when SQLite's message says the file is not a database or is damaged (a failure that
    /// no path, permission or retry fixes).
    static func isDamage(_ reason: String) -> Bool {
        reason.contains("malformed") || reason.contains("file is not a database")
    }
}
