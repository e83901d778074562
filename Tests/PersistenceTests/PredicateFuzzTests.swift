import Foundation
import Testing

@testable import Persistence

/// Feeds thousands of random and mutated format strings to the parser. Each must parse or
/// throw an `ExpressionError` with an offset inside the format (a crash fails the run), and
/// whatever parses must survive printing and parsing back.
@Suite("Predicate fuzzing")
struct PredicateFuzzTests {
    /// SplitMix64: a fixed seed keeps failures reproducible.
    typealias Generator = SeededGenerator

    static let seeds =
        PredicateRoundTripTests.predicates + [
            "title == %@ AND %K BEGINSWITH[cd] %@", "n == %d OR x < %f", "$source.price * 1.04 > 3",
        ]

    static let fragments = [
        "(", ")", "{", "}", "[c]", "[cd]", "[", "]", ",", ".", ":", "'", "\"", "\\", "\\u", "\\u{",
        "==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "!", "&&", "||", "&", "|",
        "+", "-", "*", "**", "/", "%@", "%K", "%d", "%f", "%", "$", "$x", "#", "#in", "@count",
        " AND ", " OR ", " NOT ", " IN ", " BETWEEN ", " CONTAINS ", " LIKE ", "ANY ", "ALL ", "NONE ",
        "SELF", "nil", "YES", "TRUEPREDICATE", "FUNCTION(", "CAST(", "SUBQUERY(", "now()", "uppercase:(",
        "0x", "0b1", "0o7", "1e", "1e+", "1.5", "9223372036854775808", "-", "é", "\u{301}", "📚", "\0",
        " ", "\n", "a", "b.c", "'x'", "\"y\"", "1", "0", "'NSDate'",
    ]

    static func mutate(_ input: String, using rng: inout Generator) -> String {
        var scalars = Array(input.unicodeScalars)
        for _ in 0..<Int.random(in: 1...2, using: &rng) {
            let at = Int.random(in: 0...scalars.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0:  // insert a grammar fragment
                scalars.insert(contentsOf: fragments.randomElement(using: &rng)!.unicodeScalars, at: at)
            case 1:  // delete a run
                if at < scalars.count {
                    scalars.removeSubrange(at..<min(scalars.count, at + Int.random(in: 1...5, using: &rng)))
                }
            case 2:  // duplicate a run
                if at < scalars.count {
                    let run = scalars[at..<min(scalars.count, at + Int.random(in: 1...8, using: &rng))]
                    scalars.insert(contentsOf: Array(run), at: at)
                }
            default:  // a random scalar, printable or not
                let value = UInt32.random(in: 0...0x2FF, using: &rng)
                if let scalar = Unicode.Scalar(value) { scalars.insert(scalar, at: at) }
            }
        }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return result
    }

    static func randomFragments(using rng: inout Generator) -> String {
        (0..<Int.random(in: 1...12, using: &rng)).map { _ in fragments.randomElement(using: &rng)! }.joined()
    }

    static let argumentPool: [FormatArgument] = [
        "title", "a.b", 1, 2.5, true, nil, .list([1, "x"]), .object(.permanent(entityName: "Book", primaryKey: 1)),
        "'); DROP TABLE x; --", .value(.date(Date(timeIntervalSinceReferenceDate: 0))),
    ]

    static func fittingArguments(for format: String, using rng: inout Generator) -> [FormatArgument] {
        var arguments: [FormatArgument] = []
        var rest = Substring(format)
        while let percent = rest.firstIndex(of: "%") {
            rest = rest[rest.index(after: percent)...].drop { $0 == "l" }
            switch rest.first {
            case "K": arguments.append("title")
            case "d", "i": arguments.append(7)
            case "f": arguments.append(2.5)
            default: arguments.append(argumentPool.randomElement(using: &rng)!)
            }
        }
        return arguments
    }

    @Test func randomAndMutatedFormatsOnlyParseOrThrow() throws {
        var rng = Generator(state: 0x5EED)
        var parsed = 0
        var failed = 0
        for round in 0..<4000 {
            let format =
                round.isMultiple(of: 3)
                ? Self.randomFragments(using: &rng)
                : Self.mutate(Self.seeds.randomElement(using: &rng)!, using: &rng)
            // Mostly arguments that fit the placeholders, so that parsing gets past them.
            let arguments =
                round.isMultiple(of: 4)
                ? (0..<Int.random(in: 0...3, using: &rng)).map { _ in Self.argumentPool.randomElement(using: &rng)! }
                : Self.fittingArguments(for: format, using: &rng)
            let length = format.unicodeScalars.count
            do {
                let predicate = try Predicate(format: format, arguments: arguments)
                parsed += 1
                let printed = predicate.predicateFormat
                #expect(try Predicate(format: printed) == predicate, "\(format) printed as \(printed)")
            } catch {
                failed += 1
                #expect(error.format == format)
                #expect((0...length).contains(error.offset ?? -1), "offset \(String(describing: error.offset)) for \(format)")
            }
            do {
                let expression = try Expression(format: format, arguments: arguments)
                #expect(try Expression(format: expression.format) == expression, "\(format) printed as \(expression.format)")
            } catch {
                #expect((0...length).contains(error.offset ?? -1))
            }
        }
        // Both outcomes must actually be exercised for the test to mean anything.
        #expect(parsed > 400)
        #expect(failed > 2000)
    }
}
