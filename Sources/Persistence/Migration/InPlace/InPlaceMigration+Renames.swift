extension InPlacePlanner {
    /// A set of renames (of the tables of a store, or the columns of a table) put in an order
    /// that never renames onto a name still in use.
    ///
    /// Renumbered entities can swap join-table names (`Z_1BOOKS` ↔ `Z_2BOOKS`), and renamed
    /// properties can swap column names; such cycles go through a temporary name.
    struct RenameOrder {
        typealias Rename = (from: String, to: String)

        /// The renames in a safe order, with temporary names where a cycle needs one.
        ///
        /// - Parameters:
        ///   - existing: every name in use before the first rename.
        /// - Throws: when a target name is held by something that is not being renamed away,
        ///   which means the plan is wrong.
        static func order(_ renames: [Rename], existing: Set<String>) throws(InPlaceMigration.Unsupported) -> [Rename] {
            var pending = renames.filter { $0.from != $0.to }
            var names = existing
            var result: [Rename] = []
            while !pending.isEmpty {
                if let index = pending.firstIndex(where: { !names.contains($0.to) }) {
                    let rename = pending.remove(at: index)
                    result.append(rename)
                    names.remove(rename.from)
                    names.insert(rename.to)
                    continue
                }
                // Every target is taken. Only a cycle among the pending renames can be broken.
                let moving = Set(pending.map(\.from))
                guard let index = pending.firstIndex(where: { moving.contains($0.to) }) else {
                    throw InPlaceMigration.Unsupported("the name \(pending[0].to) is in use by something that stays (a planning error)")
                }
                let aside = temporaryName(for: pending[index].from, avoiding: names)
                result.append((pending[index].from, aside))
                names.remove(pending[index].from)
                names.insert(aside)
                pending[index].from = aside
            }
            return result
        }

        /// The longest temporary name, in UTF-8 bytes: PostgreSQL keeps 63 bytes of a name
        /// (``ManagedObjectModel/longestStoreName``), and names a table's primary key index
        /// `<table>_pkey`, which the rename of a table renames by that name.
        static let longestTemporaryName = ManagedObjectModel.longestStoreName - "_pkey".utf8.count

        /// A name derived from `name` that is not in `names`, at most ``longestTemporaryName``
        /// bytes: a name at the limit is cut to make room for the suffix, since PostgreSQL
        /// would otherwise cut the suffix off and the temporary name would be the name itself.
        static func temporaryName(for name: String, avoiding names: Set<String>, suffix: String = "_MIGRATING") -> String {
            // Keep the dialect's case: PostgreSQL names are lower case.
            let tail = name == name.lowercased() ? suffix.lowercased() : suffix
            var candidate = fitted(name, tail)
            var counter = 1
            while names.contains(candidate) {
                candidate = fitted(name, "\(tail)\(counter)")
                counter += 1
            }
            return candidate
        }

        /// `base` + `ending`, `base` cut at a character boundary so that the whole fits.
        private static func fitted(_ base: String, _ ending: String) -> String {
            var kept = Substring(base)
            while kept.utf8.count + ending.utf8.count > longestTemporaryName, !kept.isEmpty {
                kept = kept.dropLast()
            }
            return kept + ending
        }
    }
}
