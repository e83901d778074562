import Foundation
import Testing

@testable import BookStoreService

/// Request bodies are parsed as RFC 8259 says, no more leniently.
@Suite("JSON parser")
struct JSONParserTests {
    static let valid: [(String, JSONValue)] = [
        (
            #"{"title": "x", "price": 9.5, "tags": [true, false, null], "n": -0.5e-3}"#,
            ["title": "x", "price": 9.5, "tags": [true, false, nil], "n": -0.0005]
        ),
        (#" {} "#, [:]), ("[]", []), ("0", 0), ("-12", -12), ("1E2", 100), (#""a""#, "a"),
        (#""\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#, "\"\\/\u{08}\u{0C}\n\r\té😀"), ("\"é\"", "é"),
    ]

    @Test(arguments: valid)
    func parses(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONParser.parse(Array(text.utf8)) == expected)
    }

    @Test(arguments: [
        #"{"title": "x",}"#, "[1,]", #"{"a": 01}"#, "{'a': 1}", "{a: 1}", "/*c*/{}", "[NaN]", #"{"a": 1} x"#, "", " ",
        #"{"a" 1}"#, #"{"a": 1 "b": 2}"#, "[1 2]", "tru", "nul", "-", "1.", ".5", "1e", "+1", #""\x""#, #""\u12""#,
        #""\ud800""#, #""\udc00""#, "\"a\u{01}b\"", #"{"a": 1, "a": 2}"#, #""unterminated"#, "{", "[",
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
    ])
    func refuses(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test func refusesInvalidUTF8AndSaysWhere() throws {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
        do {
            _ = try JSONParser.parse(Array(#"{"title": "x",}"#.utf8))
            Issue.record("a trailing comma was taken")
        } catch {
            #expect(error.description == "expected a member name in quotes at byte 15")
        }
    }
}
