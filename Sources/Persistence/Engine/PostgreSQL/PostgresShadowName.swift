import Crypto
import Foundation

/// The names of a migration's schemas beside a store's: `<schema>_migrating_<id>` for a
/// step's output, `<schema>_replaced_<id>` for the store a swap replaces,
/// `<schema>_capturing_<id>` for the changes an online migration records.
///
/// PostgreSQL cuts a longer identifier to 63 bytes without a word: a store in a schema of
/// more than 44 bytes would get shadows whose names are cut to one another's, or to the
/// store's own, which the migration would then drop. So where the whole name does not fit,
/// the schema's name is cut (at a character) and followed by a digest of it, which keeps
/// every run's prefix the same (an abandoned shadow is still found) and apart from other
/// stores' whose names begin alike:
///
/// ```swift
/// PostgresShadowName.prefix(of: "bookstore", kind: .migrating)   // "bookstore_migrating_"
/// PostgresShadowName.prefix(of: String(repeating: "ß", count: 31) + "x", kind: .migrating)
/// // "ßßßßßßßßßßßßßßßßß_3f2a9c1d_migrating_": 35 bytes of the name at most, then the digest
/// ```
public enum PostgresShadowName {
    /// What a schema beside the store holds.
    public enum Kind: String, CaseIterable, Sendable {
        /// A step's output, swapped in once it is complete.
        case migrating
        /// The store a swap replaced, dropped in the same transaction.
        case replaced
        /// The changes other sessions make to the store while an online migration copies
        /// it (``PostgresChangeCapture``).
        case capturing
    }

    /// The longest identifier PostgreSQL keeps whole (`NAMEDATALEN` − 1).
    static let identifierLimit = 63
    /// The random part that ends each name.
    static let idLength = 8

    /// Everything but the random id: what names of `kind` beside `schema` begin with.
    public static func prefix(of schema: String, kind: Kind) -> String {
        let whole = "\(schema)_\(kind.rawValue)_"
        if whole.utf8.count + idLength <= identifierLimit { return whole }
        let digest = SHA256.hash(data: Array(schema.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        let suffix = "_\(digest)_\(kind.rawValue)_"
        let room = identifierLimit - idLength - suffix.utf8.count
        var kept = ""
        for character in schema {
            guard kept.utf8.count + character.utf8.count <= room else { break }
            kept.append(character)
        }
        return kept + suffix
    }

    /// A new name of `kind` beside `schema`.
    static func new(beside schema: String, kind: Kind) -> String {
        prefix(of: schema, kind: kind) + UUID().uuidString.prefix(idLength).lowercased()
    }
}
