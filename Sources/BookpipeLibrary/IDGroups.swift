/// Groups of ids joined pairwise (union–find with path compression): the books of a library
/// (``BookGrouping``) and the report's duplicate groups use it. Each group is named by its
/// smallest id, whatever order the pairs came in.
public struct IDGroups: Sendable {
    private var parent: [String: String] = [:]

    /// No ids yet.
    public init() {}

    /// Every id added or joined so far.
    public var ids: Dictionary<String, String>.Keys { parent.keys }

    /// Adds `id` as a group of its own, when it is not in one yet.
    public mutating func add(_ id: String) {
        if parent[id] == nil { parent[id] = id }
    }

    /// Puts `a` and `b` (added when new) in one group.
    public mutating func join(_ a: String, _ b: String) {
        add(a)
        add(b)
        let rootA = root(of: a), rootB = root(of: b)
        if rootA != rootB { parent[max(rootA, rootB)] = min(rootA, rootB) }
    }

    /// The name of `id`'s group: its smallest id (`id` itself when it was never added).
    public mutating func root(of id: String) -> String {
        var current = id
        while let next = parent[current], next != current { current = next }
        var walk = id
        while let next = parent[walk], next != current {
            parent[walk] = current
            walk = next
        }
        return current
    }
}
