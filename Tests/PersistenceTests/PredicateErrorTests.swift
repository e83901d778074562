import Foundation
import Testing

@testable import Persistence

@Suite("Predicate errors")
struct PredicateErrorTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var format: String
        var arguments: [FormatArgument] = []
        var code: ExpressionError.Code
        var offset: Int
        var message: String
        var testDescription: String { format }
    }

    static let cases: [Case] = [
        Case(format: #"title == "abc"#, code: .syntax, offset: 9, message: "unterminated string"),
        Case(format: "title == 'abc", code: .syntax, offset: 9, message: "unterminated string"),
        Case(format: #"title == 'ab\'"#, code: .syntax, offset: 9, message: "unterminated string"),
        Case(format: #"a == "\q""#, code: .syntax, offset: 6, message: "unknown escape"),
        Case(format: #"a == "\u12""#, code: .syntax, offset: 6, message: "\\u escape"),
        Case(format: #"a == "\uDC00""#, code: .syntax, offset: 6, message: "unicode scalar"),
        Case(format: "title ==", code: .syntax, offset: 8, message: "end of format"),
        Case(format: "== 1", code: .syntax, offset: 0, message: "expected an expression"),
        Case(format: "", code: .syntax, offset: 0, message: "end of format"),
        Case(format: "a == 1)", code: .syntax, offset: 6, message: "unexpected ')'"),
        Case(format: "(a == 1", code: .syntax, offset: 7, message: "expected ')'"),
        Case(format: "a == 1 AND", code: .syntax, offset: 10, message: "end of format"),
        Case(format: "a == 1 b == 2", code: .syntax, offset: 7, message: "unexpected 'b'"),
        Case(format: "title", code: .syntax, offset: 5, message: "comparison operator"),
        Case(format: "a FOO 1", code: .syntax, offset: 2, message: "unknown operator 'FOO'"),
        Case(format: "a ~ 1", code: .syntax, offset: 2, message: "unexpected character '~'"),
        Case(format: "a == 1 & b == 2", code: .syntax, offset: 7, message: "unexpected character '&'"),
        Case(format: "a === 1", code: .syntax, offset: 4, message: "expected an expression"),
        Case(format: "a CONTAINS[x] 'b'", code: .unsupported, offset: 10, message: "unknown comparison option"),
        Case(format: "a CONTAINS[c 'b'", code: .syntax, offset: 13, message: "expected ']'"),
        Case(format: "a == foo:(1)", code: .unsupported, offset: 5, message: "unknown function 'foo'"),
        Case(format: "a == uppercase(1, 2)", code: .syntax, offset: 5, message: "takes 1 argument"),
        Case(format: "a == FUNCTION(b)", code: .syntax, offset: 5, message: "target and a selector"),
        Case(format: "a == FUNCTION(b, c)", code: .typeMismatch, offset: 5, message: "selector"),
        Case(format: "a == CAST('x', 'NSUUID')", code: .typeMismatch, offset: 5, message: "not a UUID"),
        Case(format: "a == CAST(1)", code: .syntax, offset: 5, message: "CAST takes"),
        Case(format: "a == %x", code: .syntax, offset: 5, message: "unknown format specifier"),
        Case(format: "a == %", code: .syntax, offset: 5, message: "incomplete format specifier"),
        Case(format: "a BETWEEN {1}", code: .syntax, offset: 2, message: "two bounds"),
        Case(format: "a == 12abc", code: .syntax, offset: 5, message: "invalid number"),
        Case(format: "a == 0x", code: .syntax, offset: 5, message: "invalid number"),
        Case(format: "a == 0b102", code: .syntax, offset: 5, message: "invalid number"),
        Case(format: "AND == 1", code: .syntax, offset: 0, message: "keyword 'AND'"),
        Case(format: "a == $", code: .syntax, offset: 5, message: "name after '$'"),
        Case(format: "a. == 1", code: .syntax, offset: 3, message: "expected a key"),
        Case(format: "a == {1, 2", code: .syntax, offset: 10, message: "expected ',' or '}'"),
        Case(
            format: "SUBQUERY(pages, $p, $p.number > 1).@count > 0",
            code: .unsupported,
            offset: 0,
            message: "SUBQUERY is not supported"
        ),
        Case(format: "title == %@", code: .missingArgument, offset: 9, message: "missing argument for %@"),
        Case(
            format: "a == %@ AND b == %@",
            arguments: [1],
            code: .missingArgument,
            offset: 17,
            message: "missing argument for %@: 1 given"
        ),
        Case(format: "%K == 1", code: .missingArgument, offset: 0, message: "missing argument for %K"),
        Case(format: "a == %@", arguments: [1, 2], code: .badArgument, offset: 7, message: "too many arguments"),
        Case(format: "TRUEPREDICATE", arguments: ["x"], code: .badArgument, offset: 13, message: "too many arguments"),
        Case(format: "%K == 1", arguments: [1], code: .badArgument, offset: 0, message: "%K must be a string"),
        Case(format: "%K == 1", arguments: [.list(["a"])], code: .badArgument, offset: 0, message: "%K must be a string"),
        Case(format: "%K == 1", arguments: ["a..b"], code: .badArgument, offset: 0, message: "not a key path"),
        Case(format: "a == %d", arguments: ["1"], code: .badArgument, offset: 5, message: "must be an integer"),
        Case(format: "a == %f", arguments: [true], code: .badArgument, offset: 5, message: "must be a number"),
    ]

    @Test(arguments: PredicateErrorTests.cases)
    func reportsCodeMessageAndOffset(_ c: Case) throws {
        let error = #expect(throws: ExpressionError.self) {
            try Predicate(format: c.format, arguments: c.arguments)
        }
        #expect(error?.code == c.code)
        #expect(error?.offset == c.offset)
        #expect(error?.format == c.format)
        #expect(error?.message.contains(c.message) == true, "message: \(error?.message ?? "none")")
        #expect(error?.description.contains("at offset \(c.offset)") == true)
    }

    @Test func expressionErrors() throws {
        let trailing = #expect(throws: ExpressionError.self) { try Expression(format: "a + b c") }
        #expect(trailing?.offset == 6)
        let predicate = #expect(throws: ExpressionError.self) { try Expression(format: "a == b") }
        #expect(predicate?.offset == 2)
        let missing = #expect(throws: ExpressionError.self) { try Expression(format: "$source.price * %@") }
        #expect(missing?.code == .missingArgument)
        #expect(missing?.offset == 16)
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        let depth = 5000
        let nested = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
        let error = #expect(throws: ExpressionError.self) { try Predicate(format: nested) }
        #expect(error?.message.contains("nested too deeply") == true)
        let negations = String(repeating: "NOT ", count: depth) + "a == 1"
        #expect(throws: ExpressionError.self) { try Predicate(format: negations) }
        let minus = "a == " + String(repeating: "-", count: depth) + "1"
        #expect(throws: ExpressionError.self) { try Predicate(format: minus) }
        // Moderate nesting is fine, and fast thanks to the parenthesis memo.
        let fine = String(repeating: "(", count: 40) + "a == 1" + String(repeating: ")", count: 40)
        #expect(try Predicate(format: fine) == compare(key("a"), .equal, const(1)))
        let expressionInside = "a == " + String(repeating: "(", count: 40) + "1" + String(repeating: ")", count: 40)
        #expect(try Predicate(format: expressionInside) == compare(key("a"), .equal, const(1)))
    }
}
