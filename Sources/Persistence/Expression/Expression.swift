import Foundation

/// An expression in `NSExpression` format: a constant, a key path, a variable, arithmetic,
/// a function or a `FUNCTION(target, "selector:", …)` call.
///
/// Predicates compare expressions; mapping models use them as value expressions.
///
/// ```swift
/// let e = try Expression(format: "$source.price * 1.04")
/// // .arithmetic(.multiply, .variable("source", keyPath: ["price"]), .constant(.double(1.04)))
/// ```
public indirect enum Expression: Sendable, Hashable {
    /// A literal value or a substituted `%@` argument.
    case constant(AttributeValue)
    /// A key path from the evaluated object, e.g. `book.title` → `["book", "title"]`.
    /// `SELF.title` parses to `["title"]`; `pages.@count` keeps `@count` as a component.
    case keyPath([String])
    /// `SELF`: the evaluated object itself.
    case evaluatedObject
    /// A variable such as `$source`, optionally followed by a key path (`$source.title`).
    case variable(String, keyPath: [String])
    /// `a + b`, `a - b`, `a * b`, `a / b`, `a ** b`, and unary minus as `0 - a`
    /// (unary minus of a number is folded: `-5` is `.constant(.integer(-5))`).
    case arithmetic(ArithmeticOperator, Expression, Expression)
    /// A built-in function: `uppercase:(x)`, `lowercase:(x)`, `now()`, `length:(x)`, …
    /// Names are stored without the trailing colon (`add:to:(a, b)` → `"add:to"`);
    /// `CAST(x, "T")` of a non-literal is `.function("castObject:toType", [x, "T"])`.
    case function(String, [Expression])
    /// `FUNCTION(target, "selector:with:", args…)`: a method call on the target.
    /// A key path after an expression that is not a key path or variable, as in
    /// `uppercase(title).length`, is a call of `valueForKeyPath:` with the path as a string.
    case functionCall(target: Expression, selector: String, arguments: [Expression])
    /// `{a, b, c}`: a collection, the right-hand side of `IN`.
    case aggregate([Expression])
    /// An object reference passed as a `%@` argument.
    case object(ObjectID)
}

/// The arithmetic operators of `NSExpression`.
public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
    /// `+`: the sum.
    case add = "+"
    /// `-`: the difference.
    case subtract = "-"
    /// `*`: the product.
    case multiply = "*"
    /// `/`: the quotient.
    case divide = "/"
    /// `**`: the left raised to the power of the right.
    case power = "**"
}
