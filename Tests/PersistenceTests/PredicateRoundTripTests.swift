import Foundation
import Testing

@testable import Persistence

@Suite("Predicate format round trip")
struct PredicateRoundTripTests {
    static let predicates = [
        "TRUEPREDICATE", "FALSEPREDICATE", "NOT TRUEPREDICATE",
        "title == 'Dune'", "title = \"Dune\"", "title != nil", "title <> NULL",
        "price < 10", "price <= 10.5", "price =< -3", "price > 1e10", "price >= -0.001", "price => 0x10",
        "title BEGINSWITH 'The'", "title beginswith[c] 'the'", "title ENDSWITH[d] 'é'",
        "title CONTAINS[cd] \"x\\\"y\"", "title LIKE 'D?n*'", "title MATCHES '^[A-Z].*$'",
        "title ==[c] 'dune'", "author IN {'Ann', 'Bo', nil}", "price BETWEEN {1, 10}",
        "ANY pages.number > 3", "SOME pages.text CONTAINS 'x'", "ALL pages.number < 100",
        "NONE pages.text == ''", "pages.@count > 0", "pages.@sum.number == 10",
        "a == 1 AND b == 2 AND c == 3", "a == 1 OR b == 2 OR c == 3",
        "a == 1 OR b == 2 AND c == 3", "(a == 1 OR b == 2) AND c == 3", "(a == 1 AND b == 2) AND c == 3",
        "NOT (a == 1 OR b == 2)", "NOT NOT a == 1", "!(a == 1) || b == 2 && c == 3",
        "(a + b) * 2 > c", "a - (b - c) == 0", "a - b - c == 0", "2 ** 3 ** 2 == x", "(2 ** 3) ** 2 == x",
        "-a < -5", "(-2) ** 2 == 4", "a * -1 == -b", "a / (b * c) == 1",
        "uppercase:(title) == 'DUNE'", "lowercase(title) BEGINSWITH 'd'", "length:(title) > 3",
        "abs:(price) < 3", "now() > created", "random() < 0.5", "add:to:(price, 1) > 3",
        "sum:(pages.number) > 10", "count:({1, 2, 3}) == 3", "max:(a, b, c) == 3",
        "CAST(created, 'NSDate') > CAST(0, 'NSDate')", "created < CAST(722000000.5, \"NSDate\")",
        "price == CAST('1.04', 'NSDecimalNumber')", "book == CAST('Book/p12', 'NSManagedObjectID')",
        "FUNCTION(SELF, 'description') == 'x'",
        "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'PersonToPerson', $source.staff) != nil",
        "$source.title == title", "price < $MAX", "SELF == $object", "SELF.title == 'a'",
        "#IN == 1", "a.#AND.#self == 2", "a.NOT == 3", "#any == 4",
        "uppercase(title).length == 4", "(title).length == 1",
        "{} == {}", "{1, {2, 3}} IN x", "YES == TRUE", "NO != FALSE",
        "title == 'line\\nbreak\\ttab'", "title == '\\u{1}\\u{7f}'", "title == '📚 漢字 \\u00e9'",
        "n == 9223372036854775807", "n == -9223372036854775808", "n == 18446744073709551616",
        "x == 1e-300", "x == 1e999", "x == -1e999", "x == 0.1", "x == 5e-324",
        "prénom == 'Zoé'",
    ]

    @Test(arguments: PredicateRoundTripTests.predicates)
    func parsesPrintsAndParsesBackEqual(_ format: String) throws {
        let parsed = try Predicate(format: format)
        let printed = parsed.predicateFormat
        let reparsed = try Predicate(format: printed)
        #expect(reparsed == parsed, "printed as: \(printed)")
        // The canonical form is a fixed point.
        #expect(reparsed.predicateFormat == printed)
    }

    static let values: [AttributeValue] = [
        .null, .integer(0), .integer(.min), .integer(.max), .double(-0.0), .double(1.0 / 3),
        .double(.greatestFiniteMagnitude), .double(.leastNonzeroMagnitude), .double(-.infinity),
        .decimal(Decimal(string: "12345678901234567890.123456789")!), .decimal(Decimal(string: "-0.5")!),
        .string("'); DROP TABLE Book; --"), .string("\\\"'\u{0}\u{1F}\u{9F}"), .bool(true), .bool(false),
        .date(Date(timeIntervalSinceReferenceDate: 722_000_000.123456)), .date(Date(timeIntervalSince1970: 0)),
        .binary(Data()), .binary(Data((0...255).map { UInt8($0) })),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .uri(URL(string: "https://example.com/path?q=a%20b#frag")!), .uri(URL(string: "file:///tmp/x.sqlite")!),
    ]

    @Test(arguments: PredicateRoundTripTests.values)
    func valueArgumentsRoundTrip(_ value: AttributeValue) throws {
        let parsed = try Predicate(format: "x == %@ AND %@ != y", .value(value), .value(value))
        #expect(parsed == .and([compare(key("x"), .equal, const(value)), compare(const(value), .notEqual, key("y"))]))
        #expect(try Predicate(format: parsed.predicateFormat) == parsed, "printed as: \(parsed.predicateFormat)")
        let arithmetic = try Expression(format: "%@ * %@ ** %@", .value(value), .value(value), .value(value))
        #expect(try Expression(format: arithmetic.format) == arithmetic, "printed as: \(arithmetic.format)")
    }

    @Test func objectIDsRoundTrip() throws {
        let permanent = ObjectID.permanent(entityName: "Book", primaryKey: 42)
        let temporary = ObjectID(entityName: "Page", key: .temporary(.init(7)))
        let p = try Predicate(format: "book == %@ OR page IN %@", .object(permanent), .object(temporary))
        #expect(p.predicateFormat == #"book == CAST("Book/p42", "NSManagedObjectID") OR page IN CAST("Page/t7", "NSManagedObjectID")"#)
        #expect(try Predicate(format: p.predicateFormat) == p)
    }

    @Test func handBuiltTreesRoundTrip() throws {
        let trees: [Predicate] = [
            .and([.or([compare(key("a"), .equal, const(1)), .true]), .not(.and([.false, .false]))]),
            compare(
                .arithmetic(.subtract, const(0), .arithmetic(.add, key("a"), const(-1))),
                .lessThan,
                .arithmetic(.power, const(-2.5), .arithmetic(.power, const(2), const(-1)))
            ),
            compare(
                .variable("source", keyPath: ["pages", "@count"]),
                .between,
                .aggregate([const(1), .function("now", [])]),
                options: [.caseInsensitive],
                modifier: .all
            ),
            compare(.keyPath(["select", "from", "where"]), .like, const("*"), options: .diacriticInsensitive),
        ]
        for tree in trees {
            #expect(try Predicate(format: tree.predicateFormat) == tree, "printed as: \(tree.predicateFormat)")
        }
    }

    @Test func canonicalSpellings() throws {
        let cases: [(String, String)] = [
            ("a=1", "a == 1"), ("a<>1", "a != 1"), ("a =< 1", "a <= 1"), ("a => 1", "a >= 1"),
            ("a beginswith[DC] 'x'", #"a BEGINSWITH[cd] "x""#), ("some a == 1", "ANY a == 1"),
            ("a == 'it\\'s'", #"a == "it's""#), ("a == yes && b == null", "a == YES AND b == nil"),
            ("#select.in == 0x1f", "select.#in == 31"), ("uppercase(a) == b", "uppercase:(a) == b"),
            ("a BETWEEN %@", "a BETWEEN {1, 2}"),
        ]
        for (input, canonical) in cases {
            let args: [FormatArgument] = input.contains("%@") ? [.list([1, 2])] : []
            #expect(try Predicate(format: input, arguments: args).predicateFormat == canonical)
        }
    }
}
