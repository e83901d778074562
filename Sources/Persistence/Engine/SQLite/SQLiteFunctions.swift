import CSQLite
import Foundation

/// SQL functions the predicate compiler relies on, registered on every connection.
///
/// - `persistence_fold(text, flags)`: case-folds (flag 1, `[c]`) and strips diacritics
///   (flag 2, `[d]`) the way Foundation compares strings, so `[cd]` works beyond ASCII.
/// - `regexp(pattern, text)`: `MATCHES`, an ICU regular expression that must match the
///   whole string, as `NSPredicate` requires. SQLite spells `x REGEXP y` as `regexp(y, x)`.
enum SQLiteFunctions {
    static func register(on db: OpaquePointer) {
        let deterministic = SQLITE_UTF8 | SQLITE_DETERMINISTIC
        sqlite3_create_function_v2(
            db,
            "persistence_fold",
            2,
            deterministic,
            nil,
            { context, _, arguments in
                guard let arguments, let text = SQLiteFunctions.text(arguments[0]) else {
                    sqlite3_result_null(context)
                    return
                }
                let flags = sqlite3_value_int(arguments[1])
                let folded = StringMatching.fold(text, flags: flags)
                SQLiteText.result(folded, in: context)
            },
            nil,
            nil,
            nil
        )

        sqlite3_create_function_v2(
            db,
            "regexp",
            2,
            deterministic,
            nil,
            { context, _, arguments in
                guard let arguments, let pattern = SQLiteFunctions.text(arguments[0]), let text = SQLiteFunctions.text(arguments[1]) else {
                    sqlite3_result_null(context)
                    return
                }
                let regex: NSRegularExpression
                if let cached = sqlite3_get_auxdata(context, 0) {
                    regex = Unmanaged<NSRegularExpression>.fromOpaque(cached).takeUnretainedValue()
                } else {
                    guard let compiled = try? StringMatching.wholeMatch(pattern) else {
                        sqlite3_result_error(context, "invalid regular expression for MATCHES: \(pattern)", -1)
                        return
                    }
                    regex = compiled
                    sqlite3_set_auxdata(context, 0, Unmanaged.passRetained(compiled).toOpaque()) { pointer in
                        if let pointer { Unmanaged<NSRegularExpression>.fromOpaque(pointer).release() }
                    }
                }
                let range = NSRange(text.startIndex..., in: text)
                sqlite3_result_int(context, regex.firstMatch(in: text, options: [], range: range) == nil ? 0 : 1)
            },
            nil,
            nil,
            nil
        )
    }

    static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL else { return nil }
        return SQLiteText.string(sqlite3_value_text(value), byteCount: sqlite3_value_bytes(value))
    }
}
