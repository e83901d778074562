import Foundation
import Testing

@testable import Persistence

@Suite("Expression parsing")
struct ExpressionParsingTests {
    static let literals: [(String, AttributeValue)] = [
        ("42", .integer(42)), ("-7", .integer(-7)), ("0", .integer(0)),
        ("9223372036854775807", .integer(.max)), ("-9223372036854775808", .integer(.min)),
        ("18446744073709551616", .double(18_446_744_073_709_551_616)),
        ("1.5", .double(1.5)), ("-0.25", .double(-0.25)), ("1e3", .double(1000)),
        ("2.5E-3", .double(0.0025)), ("1e+2", .double(100)), ("1e999", .double(.infinity)),
        ("0x1F", .integer(31)), ("0XfF", .integer(255)), ("0o17", .integer(15)), ("0b101", .integer(5)),
        ("-0x10", .integer(-16)),
        ("TRUE", .bool(true)), ("yes", .bool(true)), ("FALSE", .bool(false)), ("No", .bool(false)),
        ("NIL", .null), ("null", .null),
        ("'single'", .string("single")), ("\"double\"", .string("double")), ("''", .string("")),
        (#""say \"hi\"""#, .string("say \"hi\"")), (#"'it\'s'"#, .string("it's")),
        (#""a\\b""#, .string("a\\b")), (#""l1\nl2\tx\r""#, .string("l1\nl2\tx\r")),
        (#"'\u00e9t\u00E9'"#, .string("été")), (#""\u{1F4DA}""#, .string("📚")),
        (#""\uD83D\uDCDA""#, .string("📚")), ("\"it's\"", .string("it's")), ("'say \"x\"'", .string("say \"x\"")),
        ("\"漢字 📚\"", .string("漢字 📚")),
    ]

    @Test(arguments: ExpressionParsingTests.literals)
    func literal(format: String, value: AttributeValue) throws {
        #expect(try Expression(format: format) == .constant(value))
    }

    @Test func castLiterals() throws {
        #expect(try Expression(format: #"CAST(0, "NSDate")"#) == const(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(
            try Expression(format: #"CAST(722000000.5, "NSDate")"#)
                == const(.date(Date(timeIntervalSinceReferenceDate: 722000000.5)))
        )
        #expect(try Expression(format: #"CAST("1.04", "NSDecimalNumber")"#) == const(.decimal(Decimal(string: "1.04")!)))
        let uuid = UUID()
        #expect(try Expression(format: "CAST('\(uuid.uuidString)', 'NSUUID')") == const(.uuid(uuid)))
        #expect(
            try Expression(format: #"CAST("https://example.com/a?b=c", "NSURL")"#)
                == const(.uri(URL(string: "https://example.com/a?b=c")!))
        )
        #expect(try Expression(format: #"CAST("AAEC", "NSData")"#) == const(.binary(Data([0, 1, 2]))))
        #expect(
            try Expression(format: #"CAST("Book/p12", "NSManagedObjectID")"#)
                == .object(.permanent(entityName: "Book", primaryKey: 12))
        )
        // A cast of something that is not a literal stays a function.
        #expect(
            try Expression(format: #"CAST(created, "NSDate")"#)
                == .function("castObject:toType", [key("created"), const("NSDate")])
        )
        #expect(
            try Expression(format: #"castObject:toType:(created, "NSDate")"#)
                == .function("castObject:toType", [key("created"), const("NSDate")])
        )
    }

    @Test func aggregates() throws {
        #expect(
            try Expression(format: "{1, 'a', b.c, {}}")
                == .aggregate([const(1), const("a"), key("b.c"), .aggregate([])])
        )
    }

    @Test func arithmeticPrecedence() throws {
        func n(_ v: Int64) -> Expression { const(.integer(v)) }
        #expect(try Expression(format: "1 + 2 * 3") == .arithmetic(.add, n(1), .arithmetic(.multiply, n(2), n(3))))
        #expect(try Expression(format: "(1 + 2) * 3") == .arithmetic(.multiply, .arithmetic(.add, n(1), n(2)), n(3)))
        #expect(try Expression(format: "10 - 4 - 3") == .arithmetic(.subtract, .arithmetic(.subtract, n(10), n(4)), n(3)))
        #expect(
            try Expression(format: "a / b * c")
                == .arithmetic(.multiply, .arithmetic(.divide, key("a"), key("b")), key("c"))
        )
        #expect(try Expression(format: "2 ** 3 ** 2") == .arithmetic(.power, n(2), .arithmetic(.power, n(3), n(2))))
        #expect(try Expression(format: "2 * 3 ** 2") == .arithmetic(.multiply, n(2), .arithmetic(.power, n(3), n(2))))
        #expect(try Expression(format: "-a") == .arithmetic(.subtract, n(0), key("a")))
        #expect(try Expression(format: "-2 ** 2") == .arithmetic(.subtract, n(0), .arithmetic(.power, n(2), n(2))))
        #expect(try Expression(format: "(-2) ** 2") == .arithmetic(.power, n(-2), n(2)))
        #expect(try Expression(format: "a--1") == .arithmetic(.subtract, key("a"), n(-1)))
        #expect(try Expression(format: "- -5") == n(5))
    }

    @Test func keyPathsAndVariables() throws {
        #expect(try Expression(format: "book.title") == key("book.title"))
        #expect(try Expression(format: "#IN.size") == .keyPath(["IN", "size"]))
        #expect(try Expression(format: "a.AND.#SELF") == .keyPath(["a", "AND", "SELF"]))
        #expect(try Expression(format: "pages.@count") == .keyPath(["pages", "@count"]))
        #expect(try Expression(format: "SELF") == .evaluatedObject)
        #expect(try Expression(format: "self.title") == key("title"))
        #expect(try Expression(format: "prénom_2") == key("prénom_2"))
        #expect(try Expression(format: "$manager") == .variable("manager", keyPath: []))
        #expect(try Expression(format: "$source.pages.@count") == .variable("source", keyPath: ["pages", "@count"]))
        #expect(try Expression(format: "($source).title") == .variable("source", keyPath: ["title"]))
        #expect(try Expression(format: "(a).b") == key("a.b"))
        #expect(
            try Expression(format: "uppercase(title).length.x")
                == .functionCall(
                    target: .function("uppercase", [key("title")]),
                    selector: "valueForKeyPath:",
                    arguments: [const("length.x")]
                )
        )
    }

    @Test func functionsInBothSpellings() throws {
        for name in ["uppercase", "lowercase", "length", "abs", "sum", "count", "min", "max", "average"] {
            let expected = Expression.function(name, [key("title")])
            #expect(try Expression(format: "\(name):(title)") == expected)
            #expect(try Expression(format: "\(name)(title)") == expected)
        }
        #expect(try Expression(format: "now()") == .function("now", []))
        #expect(try Expression(format: "random()") == .function("random", []))
        #expect(try Expression(format: "add:to:(1, price)") == .function("add:to", [const(1), key("price")]))
        #expect(try Expression(format: "sum:({1, 2})") == .function("sum", [.aggregate([const(1), const(2)])]))
        #expect(try Expression(format: "max(a, b, 3)") == .function("max", [key("a"), key("b"), const(3)]))
    }

    @Test func functionCall() throws {
        let e = try Expression(
            format: #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "PersonToPerson", $source.staff)"#
        )
        #expect(
            e
                == .functionCall(
                    target: .variable("manager", keyPath: []),
                    selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                    arguments: [const("PersonToPerson"), .variable("source", keyPath: ["staff"])]
                )
        )
        #expect(
            try Expression(format: "function(SELF, 'description')")
                == .functionCall(target: .evaluatedObject, selector: "description", arguments: [])
        )
    }

    @Test func mappingValueExpressions() throws {
        #expect(
            try Expression(format: "$source.price * 1.04")
                == .arithmetic(.multiply, .variable("source", keyPath: ["price"]), const(1.04))
        )
        #expect(try Expression(format: "$source.title") == .variable("source", keyPath: ["title"]))
    }

    @Test func placeholderArguments() throws {
        #expect(
            try Expression(format: "%K * %f", arguments: ["price", 1.04])
                == .arithmetic(.multiply, key("price"), const(1.04))
        )
        #expect(
            try Expression(format: "%@ + %d", .value(.decimal(2)), 3)
                == .arithmetic(.add, const(.decimal(2)), const(3))
        )
        #expect(try Expression(format: "%K", .value(.string("a.b"))) == key("a.b"))
    }

    @Test func formatOfExpressions() throws {
        #expect(try Expression(format: "$source.price*1.04").format == "$source.price * 1.04")
        #expect(try Expression(format: "(1+2)*-3").format == "(1 + 2) * (-3)")
        #expect(try Expression(format: "2**(3**2)").format == "2 ** 3 ** 2")
        #expect(try Expression(format: "(2**3)**2").format == "(2 ** 3) ** 2")
        #expect(try Expression(format: "a-(b-c)").format == "a - (b - c)")
        #expect(try Expression(format: "uppercase(#in)").format == "uppercase:(#in)")
        #expect(try Expression(format: "now( )").description == "now()")
        #expect(try Expression(format: "'it\\'s'").format == #""it's""#)
        #expect(Expression.constant(.string("a\"b\\c\u{1}")).format == #""a\"b\\c\u{1}""#)
    }
}
