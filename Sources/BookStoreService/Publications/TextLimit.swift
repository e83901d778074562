/// The longest text each field and query parameter takes, in Unicode scalars (what JSON
/// Schema's `maxLength` counts). The OpenAPI document gives the same numbers; a longer text
/// is refused naming the field: 422 in a body, 400 in a query (as any bad parameter).
///
/// They bound what one row can hold, and with the list's `limit` what one list response
/// holds (see ``ListResponseBody``): 100 rows of the longest synopsis are about 4 MB.
enum TextLimit {
    static let title = 500
    /// `firstName` and `lastName`.
    static let name = 200
    static let synopsis = 10_000
    static let pageText = 20_000
    /// The `q` and `lastName` filters of a list.
    static let filter = 500
    /// A list's `after`: the `next` it gave, whose JSON holds the sort values of a row (the
    /// title and both names at most, each character up to 6 bytes once escaped) and the
    /// sort itself, in base64.
    static let cursor = ((title + 2 * name) * 6 + filter + 200) * 4 / 3

    /// What is wrong with a text, if anything.
    enum Refusal {
        /// NUL (U+0000): refused on every engine, so the API does not take on one engine
        /// what it refuses on another. Not text the API takes at all (400).
        case invalidCharacter(Problem.FieldError)
        /// Well-formed, but more than the API stores (422 in a body).
        case tooLong(Problem.FieldError)

        var fieldError: Problem.FieldError {
            switch self {
            case .invalidCharacter(let error), .tooLong(let error): error
            }
        }
    }

    static func refusal(of text: String, field: String, maximum: Int) -> Refusal? {
        if text.utf8.contains(0) {
            return .invalidCharacter(
                .init(
                    field: field,
                    code: "invalidCharacter",
                    message: "\(field) holds a NUL character (U+0000), which the store does not keep; remove it"
                )
            )
        }
        let length = text.unicodeScalars.count
        if length > maximum {
            return .tooLong(.init(field: field, code: "stringTooLong", message: "\(field) must be at most \(maximum) characters long, got \(length)"))
        }
        return nil
    }
}
