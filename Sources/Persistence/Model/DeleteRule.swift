/// What happens to the destination of a relationship when its source is deleted.
///
/// The raw values are Xcode's `deletionRule` spellings.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// Remove the deleted object from the inverse relationship of its destinations.
    case nullify = "Nullify"
    /// Delete the destinations too.
    case cascade = "Cascade"
    /// Refuse the delete while the relationship has a destination.
    case deny = "Deny"
    /// Do nothing to the destinations; they may point at a deleted object.
    case noAction = "No Action"
}
