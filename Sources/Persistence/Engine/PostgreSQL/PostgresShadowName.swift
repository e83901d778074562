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
package enum PostgresShadowName {
    /// What a schema beside the store holds.
    package enum Kind: String, CaseIterable, Sendable {
        /// A step's output, swapped in once it is complete.
        case migrating
        /// The store a swap replaced, dropped in the same transaction.
        case replaced
        /// The changes other sessions make to the store while an online migration copies
        /// it (`PostgresChangeCapture`).
        case capturing
    }

    /// The longest identifier PostgreSQL keeps whole (`NAMEDATALEN` − 1).
    static let identifierLimit = 63
    /// The random part that ends each name.
    static let idLength = 8

    /// Everything but the random id: what names of `kind` beside `schema` begin with.
    package static func prefix(of schema: String, kind: Kind) -> String {
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

    /// The schemas of `kind` beside `schema` in `names`: the prefix and an id of eight
    /// lowercase hexadecimal digits (a schema of the user's that begins alike is not one).
    static func named(_ kind: Kind, beside schema: String, in names: [String]) -> [String] {
        let prefix = prefix(of: schema, kind: kind)
        return names.filter { name in
            guard name.hasPrefix(prefix) else { return false }
            let id = name.dropFirst(prefix.count)
            return id.count == idLength && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }
        }
    }

    /// Whether `schema` is named as a migration's own output, copy or round store is
    /// (`…_migrating_` and an id of eight lowercase hexadecimal digits): a store the
    /// migration works on, never served, which it need not ready to serve.
    static func isMigrationWorkspace(_ schema: String) -> Bool {
        let marker = "_\(Kind.migrating.rawValue)_"
        guard schema.utf8.count > marker.utf8.count + idLength else { return false }
        let id = schema.suffix(idLength)
        return schema.dropLast(idLength).hasSuffix(marker) && id.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    /// A new name of `kind` beside `schema`.
    static func new(beside schema: String, kind: Kind) -> String {
        prefix(of: schema, kind: kind) + UUID().uuidString.prefix(idLength).lowercased()
    }

    /// What killed runs left beside the store: its shadows (an offline run's output, an
    /// online run's copy and round stores), and beside each of those the shadows of the
    /// migration that ran on it, whose names are made from its name (cut and digested when
    /// long, so they need not begin as the store's do). Only this run can be migrating: it
    /// holds the lock.
    static func leftovers(beside schema: String, on connection: any DatabaseConnection) throws -> [String] {
        let names = try connection.rows("SELECT nspname FROM pg_namespace ORDER BY nspname").compactMap { $0[0].text }
        var found: [String] = []
        var beside = [schema]
        while let next = beside.popLast() {
            let shadows = named(.migrating, beside: next, in: names) + named(.replaced, beside: next, in: names)
            for shadow in shadows where !found.contains(shadow) {
                found.append(shadow)
                beside.append(shadow)
            }
        }
        // The nested ones first: dropping their parent first would leave them for nothing.
        return found.reversed()
    }
}
