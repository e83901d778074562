import Foundation

/// Whether the values of one attribute fit the attribute they fill in the next version:
/// its integer range, its fraction-free integers, its bounds, and whether it needs a value.
struct ValueFit {
    /// A source value that does not fit; a row is counted when any of its conditions holds.
    enum Condition: Sendable, Hashable {
        /// No value, where one is required.
        case missing
        /// A number below `min` or above `max`.
        case outside(min: Double?, max: Double?)
        /// A number with a fraction, where an integer is needed.
        case fractional
        /// A string shorter than `min` or longer than `max` characters.
        case lengthOutside(min: Double?, max: Double?)
    }

    /// Why some values of `from` may not fit `into`, and how to find them; `nil` when all fit.
    static func misfit(from: AttributeDescription, into: AttributeDescription) -> (reason: String, conditions: [Condition])? {
        var reasons: [String] = []
        var conditions: [Condition] = []
        if into.type.isInteger, from.type.isNumeric, let range = into.type.integerRange {
            let wider = from.type.integerRange.map { $0.lowerBound < range.lowerBound || $0.upperBound > range.upperBound } ?? true
            if !from.type.isInteger {
                reasons.append("\(from.type.rawValue) values with a fraction do not fit \(into.type.rawValue)")
                conditions.append(.fractional)
            }
            if wider {
                reasons.append("values outside \(range.lowerBound)…\(range.upperBound) do not fit \(into.type.rawValue)")
                conditions.append(.outside(min: Double(range.lowerBound), max: Double(range.upperBound)))
            }
        }
        // Only a bound tighter than the source's (or new) leaves values out.
        let (fromMin, fromMax) = (number(from.minValue), number(from.maxValue))
        let tighterMin = number(into.minValue).flatMap { min in fromMin.map { min > $0 } ?? true ? min : nil }
        let tighterMax = number(into.maxValue).flatMap { max in fromMax.map { max < $0 } ?? true ? max : nil }
        let bounds = (tighterMin, tighterMax)
        if bounds.0 != nil || bounds.1 != nil {
            let spelled = "\(number(into.minValue).map(Self.spelled) ?? "")…\(number(into.maxValue).map(Self.spelled) ?? "")"
            if into.type == .string {
                reasons.append("\(into.name) must be \(spelled) characters long")
                conditions.append(.lengthOutside(min: bounds.0, max: bounds.1))
            } else if into.type.isNumeric {
                reasons.append("\(into.name) must be within \(spelled)")
                conditions.append(.outside(min: bounds.0, max: bounds.1))
            }
        }
        if from.isOptional, !into.isOptional, into.defaultValue == nil {
            reasons.append("\(into.name) is required and has no default, so rows without a value have none")
            conditions.append(.missing)
        }
        return reasons.isEmpty ? nil : (reasons.joined(separator: "; "), conditions)
    }

    private static func spelled(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func number(_ value: AttributeValue?) -> Double? {
        switch value {
        case .integer(let v)?: Double(v)
        case .double(let v)?: v
        case .decimal(let v)?: Double(truncating: v as NSDecimalNumber)
        default: nil
        }
    }
}
