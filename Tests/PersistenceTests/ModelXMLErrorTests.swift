import Foundation
import Testing

@testable import Persistence

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A model file that is not well-formed XML is refused in words: what is wrong, and for a
/// file that ends too early, that it looks cut off; never a bare parser code.
@Suite("Model XML errors in words")
struct ModelXMLErrorTests {
    static let bookStore5 = ModelFixtures.bookStore.appendingPathComponent("BookStore 5.xcdatamodel/contents")

    /// The error loading `data` as a model's `contents` file; fails the test if it loads.
    static func loadError(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws -> ModelError {
        let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Cut.xcdatamodel")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try data.write(to: folder.appendingPathComponent("contents"))
        do throws(ModelError) {
            _ = try ManagedObjectModel(contentsOf: folder)
        } catch {
            return error
        }
        Issue.record("the model loaded", sourceLocation: sourceLocation)
        throw CancellationError()
    }

    /// Expects words, not a parser code.
    static func expectWords(_ error: ModelError, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == .malformedXML, sourceLocation: sourceLocation)
        #expect(error.message.hasPrefix("the model file is not well-formed XML: "), "\(error.message)", sourceLocation: sourceLocation)
        #expect(
            !error.message.contains("parser error") && !error.message.contains("by its number"),
            "\(error.message)",
            sourceLocation: sourceLocation
        )
    }

    @Test("a model file cut in half says it is not well-formed XML and looks cut off, at its last line")
    func truncatedHalfway() throws {
        let full = try Data(contentsOf: Self.bookStore5)
        let half = full.prefix(full.count / 2)
        let error = try Self.loadError(half)
        Self.expectWords(error)
        #expect(error.message.contains("it ends before its </model>, as a file that was cut off does"), "\(error.message)")
        #expect(error.message.hasSuffix("restore the whole file (e.g. from version control) or re-save the model in Xcode"))
        #expect(error.file?.hasSuffix("Cut.xcdatamodel/contents") == true)
        #expect(error.line == 1 + half.count { $0 == 0x0A }, "the line it ends on")
    }

    @Test("a model file cut anywhere says it looks cut off")
    func truncatedAnywhere() throws {
        let full = try Data(contentsOf: Self.bookStore5)
        var missed: [String] = []
        for length in 1..<full.count {
            do throws(ModelError) {
                _ = try ManagedObjectModel(xml: full.prefix(length), name: "Cut", file: "contents")
                missed.append("\(length): loaded")
            } catch {
                if error.code != .malformedXML || !error.message.contains("cut off") || error.message.contains("parser error") {
                    missed.append("\(length): \(error.message)")
                }
            }
        }
        #expect(missed.isEmpty, "\(missed.count) cuts: \(missed.prefix(5))")
    }

    static let header = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"

    static func document(_ body: String) -> Data {
        Data((header + "<model>\n" + body + "\n</model>\n").utf8)
    }

    @Test(
        "broken XML of every kind is said in words",
        arguments: [
            ("garbage bytes", Data([0x00, 0xFF, 0x13, 0x88, 0x42, 0x00, 0x01]), "the file holds no XML: it is empty, or it does not begin with '<'"),
            (
                "garbage after the header", Data((header + "<model>\n").utf8) + Data([0xFF, 0xFE, 0x00, 0x01]) + Data("\n</model>".utf8),
                "bytes that are not UTF-8"
            ),
            (
                "invalid UTF-8", Data((header + "<model>\n<entity name=\"").utf8) + Data([0xC3, 0x28]) + Data("\"/>\n</model>".utf8),
                "bytes that are not UTF-8"
            ),
            ("a NUL byte", Data((header + "<model>\n").utf8) + Data([0]) + Data("\n</model>".utf8), "a character XML does not allow"),
            ("an unclosed attribute value", document("<entity name=\"Book/>"), "a '<' inside an attribute value"),
            ("an unquoted attribute value", document("<entity name=Book/>"), "an attribute value is not in quotes"),
            ("an attribute without '='", document("<entity name \"Book\"/>"), "an attribute has no value"),
            ("an attribute given twice", document("<entity name=\"A\" name=\"B\"/>"), "an attribute is given twice"),
            ("a lone '<'", document("<"), "a '<' or '&' is not followed by a name"),
            ("a lone '&'", document("<entity name=\"A & B\"/>"), "a '<' or '&' is not followed by a name"),
            (
                "text after the root element", Data((header + "<model>\n</model>\nleft over").utf8),
                "there is more after the </model> that ends the document"
            ),
            (
                "an element after the root element", Data((header + "<model>\n</model>\n<model/>").utf8),
                "there is more after the </model> that ends the document"
            ),
            ("an undefined entity", document("<entity name=\"&book;\"/>"), "names an entity that is not defined"),
            (
                "entities that expand too much",
                Data(
                    (header + """
                        <!DOCTYPE model [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\
                        <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">\
                        <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]>
                        <model>
                        <entity name="&h;"/>
                        </model>
                        """).utf8
                ), "entities refer to themselves or expand too much"
            ),
            (
                "an entity that refers to itself",
                Data(
                    (header + """
                        <!DOCTYPE model [<!ENTITY a "&b;"><!ENTITY b "&a;">]>
                        <model>
                        <entity name="&a;"/>
                        </model>
                        """).utf8
                ), "entities refer to themselves or expand too much"
            ),
            ("a mismatched end tag", document("<entity name=\"Book\">\n</model>"), "an end tag does not match its start tag"),
            ("a '--' in a comment", document("<!-- a -- b -->"), "a comment holds '--'"),
            ("an XML declaration after the start", Data(("\n\n" + header + "<model/>").utf8), "must come first"),
            ("an undeclared namespace prefix", Data((header + "<x:model>\n</x:model>").utf8), "a namespace prefix (prefix:name) is not declared"),
            ("an unknown encoding", Data("<?xml version=\"1.0\" encoding=\"klingon\"?>\n<model/>".utf8), "the file's encoding is not supported"),
        ] as [(String, Data, String)]
    )
    func brokenXML(kind: String, data: Data, expected: String) throws {
        let error = try Self.loadError(data)
        Self.expectWords(error)
        #expect(error.message.contains(expected), "\(kind): \(error.message)")
        #expect(!error.message.contains("cut off"), "\(kind): the file is complete")
    }

    @Test("a code without words of its own is still said in words, with its number")
    func unknownCode() {
        let words = XMLParser.describe(NSError(domain: XMLParser.errorDomain, code: 999))
        #expect(words == "the parser stopped at something it names only by its number, 999; look at the XML there")
    }
}
