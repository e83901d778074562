/// Reads a request's query parameters by name and type, collecting every problem before
/// refusing the request.
///
/// ```swift
/// var reader = try QueryReader(parameters, allowed: ["limit", "q"])
/// let limit = reader.integer("limit", in: 1...100) ?? 20
/// try reader.finish()   // 400 naming each bad parameter
/// ```
///
/// The parameters are Hummingbird's (`request.uri.queryParameters`, percent-decoded); reading
/// them stays the service's own, since Hummingbird's `uri.decodeQuery(as:context:)` is looser
/// than the API's errors: it ignores a parameter no list takes (`?limt=5` would list twenty),
/// reads `+` as a space (`q=C++` would search for `C  `), throws for a repeated parameter
/// an error that is no HTTP error (a 500 here), and stops at the first bad value with "Type
/// mismatch for `limit` key, expected `Int` type." where the API names each bad parameter,
/// its range and what it got (`limit must be a whole number from 1 to 100, got '10abc'`).
struct QueryReader {
    private var values: [String: String] = [:]
    private(set) var errors: [Problem.FieldError] = []

    /// - Throws: ``Problem`` (400) at once for unknown or repeated parameters.
    init(_ parameters: [(String, String)], allowed: [String]) throws(Problem) {
        for (name, value) in parameters {
            guard allowed.contains(name) else {
                errors.append(
                    .init(
                        field: name,
                        code: "unknownParameter",
                        message: "'\(name)' is not a parameter of this list; use \(allowed.joined(separator: ", "))"
                    )
                )
                continue
            }
            guard values[name] == nil else {
                errors.append(.init(field: name, code: "repeatedParameter", message: "\(name) is given more than once"))
                continue
            }
            values[name] = value
        }
        if !errors.isEmpty { throw Problem.invalidQuery(errors) }
    }

    /// A text of at most `maxLength` Unicode scalars and without NUL, which no field holds
    /// (the service refuses it in every text it stores).
    mutating func text(_ name: String, maxLength: Int) -> String? {
        guard let text = values[name] else { return nil }
        if let refusal = TextLimit.refusal(of: text, field: name, maximum: maxLength) {
            errors.append(refusal.fieldError)
            return nil
        }
        return text
    }

    mutating func integer(_ name: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            refuse(name, code: "invalidValue", "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
            return nil
        }
        return value
    }

    mutating func number(_ name: String) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value.isFinite else {
            refuse(name, code: "invalidValue", "\(name) must be a number, got '\(text)'")
            return nil
        }
        return value
    }

    mutating func refuse(_ name: String, code: String, _ message: String) {
        errors.append(.init(field: name, code: code, message: message))
    }

    func finish() throws(Problem) {
        if !errors.isEmpty { throw Problem.invalidQuery(errors) }
    }
}
