import Foundation

/// A Key-Value Coding collection operator in a key path after a to-many relationship, in
/// value expressions (`$source.shelves.@sum.width`) and fetch predicates
/// (`shelves.@max.width > 2`).
///
/// - `@count`: how many objects;
/// - `@sum`, `@avg`, `@min`, `@max`: of the values of the key path after it, `nil`s left
///   out; `@sum` of none is 0, the others of none are `nil`;
/// - `@unionOfObjects`, `@unionOfSets` and their `distinct` forms: every object's values (or
///   objects) at the key path after it, as one collection; the `distinct` forms keep each
///   once. Value expressions only.
enum CollectionOperator: String, CaseIterable, Sendable {
    case count = "@count"
    case sum = "@sum"
    case average = "@avg"
    case minimum = "@min"
    case maximum = "@max"
    case unionOfObjects = "@unionOfObjects"
    case distinctUnionOfObjects = "@distinctUnionOfObjects"
    case unionOfSets = "@unionOfSets"
    case distinctUnionOfSets = "@distinctUnionOfSets"

    /// `@sum`, `@avg`, `@min`, `@max`: one value of many.
    var isAggregate: Bool { [.sum, .average, .minimum, .maximum].contains(self) }

    /// Whether it keeps each value or object once.
    var isDistinct: Bool { self == .distinctUnionOfObjects || self == .distinctUnionOfSets }

    /// Every operator, for messages.
    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The aggregate of `values` (no `nil`s among them): integers sum to an integer,
    /// decimals to a decimal, other numbers to a double; `@min` and `@max` order values as
    /// fetches do (``PredicateEvaluator/order(_:_:flags:)``).
    func aggregate(_ values: [AttributeValue]) throws(ExpressionError) -> AttributeValue {
        switch self {
        case .minimum, .maximum:
            guard var best = values.first else { return .null }
            for value in values.dropFirst() {
                // As fetches order them: strings by code point, as the stores' BINARY collation does.
                guard let order = PredicateEvaluator.order(value, best) else {
                    throw ExpressionError(.typeMismatch, "\(rawValue) cannot compare \(value.kindName) with \(best.kindName)")
                }
                if self == .minimum ? order == .orderedAscending : order == .orderedDescending { best = value }
            }
            return best
        case .sum, .average:
            if let odd = values.first(where: { $0.doubleValue == nil }) {
                throw ExpressionError(.typeMismatch, "\(rawValue) needs numbers, but got \(odd.kindName)")
            }
            if self == .average, values.isEmpty { return .null }
            if values.contains(where: { if case .decimal = $0 { true } else { false } }) {
                let sum = values.reduce(Decimal(0)) { total, value in
                    switch value {
                    case .decimal(let d): total + d
                    case .integer(let i): total + Decimal(i)
                    default: total + Decimal(value.doubleValue ?? 0)
                    }
                }
                return .decimal(self == .sum ? sum : sum / Decimal(values.count))
            }
            if self == .sum, values.allSatisfy({ $0.integerValue != nil }) {
                var sum: Int64 = 0
                var overflowed = false
                for value in values {
                    let (next, overflow) = sum.addingReportingOverflow(value.integerValue ?? 0)
                    sum = next
                    overflowed = overflowed || overflow
                }
                if !overflowed { return .integer(sum) }
            }
            let sum = values.reduce(0.0) { $0 + ($1.doubleValue ?? 0) }
            return .double(self == .sum ? sum : sum / Double(values.count))
        default:
            throw ExpressionError(.unsupported, "\(rawValue) collects, it does not aggregate")
        }
    }
}
