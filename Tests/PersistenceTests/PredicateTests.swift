import Foundation
import Testing

@testable import Persistence

// Foundation has its own `Predicate` and `Expression`; in this test module the names mean ours.
typealias Predicate = Persistence.Predicate
typealias Expression = Persistence.Expression

/// Shorthands for expected trees.
func key(_ path: String) -> Expression { .keyPath(path.split(separator: ".").map(String.init)) }
func const(_ value: AttributeValue) -> Expression { .constant(value) }
func compare(
    _ lhs: Expression,
    _ op: ComparisonOperator,
    _ rhs: Expression,
    options: ComparisonOptions = [],
    modifier: ComparisonModifier = .direct
) -> Predicate {
    .comparison(Comparison(lhs, op, rhs, options: options, modifier: modifier))
}

@Suite("Predicate parsing")
struct PredicateTests {
    static let operators: [(String, ComparisonOperator)] = [
        ("==", .equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .lessThan), ("<=", .lessThanOrEqual), ("=<", .lessThanOrEqual),
        (">", .greaterThan), (">=", .greaterThanOrEqual), ("=>", .greaterThanOrEqual),
        ("BEGINSWITH", .beginsWith), ("beginsWith", .beginsWith), ("ENDSWITH", .endsWith),
        ("CONTAINS", .contains), ("contains", .contains), ("LIKE", .like), ("MATCHES", .matches),
        ("IN", .in), ("in", .in),
    ]

    @Test(arguments: PredicateTests.operators)
    func comparisonOperator(spelling: String, op: ComparisonOperator) throws {
        let p = try Predicate(format: "title \(spelling) 'x'")
        #expect(p == compare(key("title"), op, const("x")))
    }

    static let optionSpellings: [(String, ComparisonOptions)] = [
        ("[c]", .caseInsensitive), ("[d]", .diacriticInsensitive),
        ("[cd]", [.caseInsensitive, .diacriticInsensitive]), ("[dc]", [.caseInsensitive, .diacriticInsensitive]),
        ("[CD]", [.caseInsensitive, .diacriticInsensitive]),
    ]

    @Test(arguments: PredicateTests.optionSpellings)
    func options(spelling: String, options: ComparisonOptions) throws {
        for op in ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES", "=="] {
            let p = try Predicate(format: "title \(op)\(spelling) \"the\"")
            let expected = ComparisonOperator(rawValue: op)!
            #expect(p == compare(key("title"), expected, const("the"), options: options))
        }
    }

    @Test(arguments: [
        ("ANY", ComparisonModifier.any), ("any", .any), ("SOME", .any), ("ALL", .all), ("NONE", .none),
    ])
    func modifier(word: String, modifier: ComparisonModifier) throws {
        let p = try Predicate(format: "\(word) pages.number > 3")
        #expect(p == compare(key("pages.number"), .greaterThan, const(3), modifier: modifier))
    }

    @Test func between() throws {
        #expect(
            try Predicate(format: "price BETWEEN {1, 5.5}")
                == compare(key("price"), .between, .aggregate([const(1), const(5.5)]))
        )
        #expect(
            try Predicate(format: "price between %@", .list([2, 3]))
                == compare(key("price"), .between, .aggregate([const(2), const(3)]))
        )
    }

    @Test func inAggregate() throws {
        #expect(
            try Predicate(format: "author IN {'Ann', \"Bo\"}")
                == compare(key("author"), .in, .aggregate([const("Ann"), const("Bo")]))
        )
    }

    @Test func truePredicates() throws {
        #expect(try Predicate(format: "TRUEPREDICATE") == .true)
        #expect(try Predicate(format: " falsepredicate ") == .false)
        #expect(try Predicate(format: "NOT TRUEPREDICATE OR FALSEPREDICATE") == .or([.not(.true), .false]))
    }

    @Test func precedence() throws {
        let a = compare(key("a"), .equal, const(1))
        let b = compare(key("b"), .equal, const(2))
        let c = compare(key("c"), .equal, const(3))
        #expect(try Predicate(format: "a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try Predicate(format: "a == 1 AND b == 2 OR c == 3") == .or([.and([a, b]), c]))
        #expect(try Predicate(format: "NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try Predicate(format: "NOT (a == 1 AND b == 2)") == .not(.and([a, b])))
        #expect(try Predicate(format: "(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
        #expect(try Predicate(format: "a == 1 && b == 2 || !(c == 3)") == .or([.and([a, b]), .not(c)]))
        #expect(try Predicate(format: "a == 1 and b == 2 and c == 3") == .and([a, b, c]))
        #expect(try Predicate(format: "(a == 1 AND b == 2) AND c == 3") == .and([.and([a, b]), c]))
        #expect(try Predicate(format: "not not a == 1") == .not(.not(a)))
        #expect(try Predicate(format: "((a == 1))") == a)
    }

    @Test func parenthesisedExpressionOnTheLeft() throws {
        let p = try Predicate(format: "(a + b) * 2 > c")
        let lhs = Expression.arithmetic(.multiply, .arithmetic(.add, key("a"), key("b")), const(2))
        #expect(p == compare(lhs, .greaterThan, key("c")))
        #expect(try Predicate(format: "((a)) == (1)") == compare(key("a"), .equal, const(1)))
        #expect(try Predicate(format: "NOT (price) < 3") == .not(compare(key("price"), .lessThan, const(3))))
    }

    @Test func placeholders() throws {
        let id = ObjectID.permanent(entityName: "Book", primaryKey: 7)
        let date = Date(timeIntervalSince1970: 1_000_000)
        #expect(
            try Predicate(format: "%K == %@", "title", "Dune")
                == compare(key("title"), .equal, const("Dune"))
        )
        #expect(
            try Predicate(format: "%K < %@", "book.price", .value(.double(9.5)))
                == compare(key("book.price"), .lessThan, const(9.5))
        )
        #expect(
            try Predicate(format: "created > %@", .value(.date(date)))
                == compare(key("created"), .greaterThan, const(.date(date)))
        )
        #expect(try Predicate(format: "author == %@", nil) == compare(key("author"), .equal, const(.null)))
        #expect(try Predicate(format: "book == %@", .object(id)) == compare(key("book"), .equal, .object(id)))
        #expect(
            try Predicate(format: "n IN %@", .list([1, "two"]))
                == compare(key("n"), .in, .aggregate([const(1), const("two")]))
        )
        #expect(
            try Predicate(format: "n == %d OR n == %i OR n == %ld", 1, 2, 3)
                == .or([
                    compare(key("n"), .equal, const(1)), compare(key("n"), .equal, const(2)),
                    compare(key("n"), .equal, const(3)),
                ])
        )
        #expect(
            try Predicate(format: "x > %f AND y < %lf", 1.5, 2)
                == .and([compare(key("x"), .greaterThan, const(1.5)), compare(key("y"), .lessThan, const(2.0))])
        )
    }

    static let hostileStrings = [
        "'); DROP TABLE Book; --", "\"); DROP TABLE Book; --", "a' OR '1'='1", "back\\slash\\",
        "\"quoted\"", "'single'", "", " ", "line\nbreak\ttab\r", "%@ %K $VAR", "nul\0byte",
        "Ünïcødé 📚 漢字 שלום", "e\u{301}", "\u{7}bell\u{1B}esc\u{7F}", "AND OR NOT == {}", "\\u0041",
    ]

    @Test(arguments: PredicateTests.hostileStrings)
    func hostileArgumentStaysOneConstant(_ value: String) throws {
        let p = try Predicate(format: "title == %@ AND TRUEPREDICATE", .string(value))
        #expect(p == .and([compare(key("title"), .equal, const(.string(value))), .true]))
        // …and survives being printed and parsed back.
        #expect(try Predicate(format: p.predicateFormat) == p)
    }

    @Test func variablesSubstitute() throws {
        let p = try Predicate(format: "price < $MAX AND title == $title")
        #expect(
            p
                == .and([
                    compare(key("price"), .lessThan, .variable("MAX", keyPath: [])),
                    compare(key("title"), .equal, .variable("title", keyPath: [])),
                ])
        )
        let bound = try p.substituting(["MAX": 10.5, "title": "Dune", "unused": 1])
        #expect(
            bound
                == .and([
                    compare(key("price"), .lessThan, const(10.5)),
                    compare(key("title"), .equal, const("Dune")),
                ])
        )
    }

    @Test func unboundVariableIsAnError() throws {
        let p = try Predicate(format: "NOT (price < $MAX)")
        let error = #expect(throws: ExpressionError.self) { try p.substituting(["max": 1]) }
        #expect(error?.code == .unboundVariable)
        #expect(error?.message.contains("$MAX") == true)
    }

    @Test func variableWithKeyPathIsLeftAloneUnlessBound() throws {
        let p = try Predicate(format: "$source.title == $title")
        #expect(
            try p.substituting(["title": "x"])
                == compare(.variable("source", keyPath: ["title"]), .equal, const("x"))
        )
        let error = #expect(throws: ExpressionError.self) { try p.substituting(["title": "x", "source": 1]) }
        #expect(error?.code == .typeMismatch)
    }

    @Test func descriptionIsTheCanonicalFormat() throws {
        let p = try Predicate(format: "title beginswith[c] 'the' && price<10 or not any pages.number=>1")
        let expected = #"(title BEGINSWITH[c] "the" AND price < 10) OR NOT ANY pages.number >= 1"#
        #expect(p.predicateFormat == expected)
        #expect(p.description == expected)
        #expect("\(p)" == expected)
    }
}
