import Foundation
import Testing

@testable import Persistence

/// Binary property lists and keyed archives of `NSExpression`, as Xcode stores value
/// expressions in a mapping model.
@Suite struct KeyedArchiveTests {
    @Test func binaryPropertyListsReadAsFoundationWritesThem() throws {
        let value: [String: Any] = [
            "text": "plain", "unicode": "Grüße, 世界", "long": String(repeating: "x", count: 300), "int": 42, "negative": -7,
            "big": Int64.max, "real": 1.25, "yes": true, "no": false, "data": Data([0, 1, 2, 255]),
            "list": [1, "two", [3.5]], "nested": ["a": ["b": "c"]],
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: value, format: .binary, options: 0)
        let read = try BinaryPropertyList.read(data)
        guard case .dictionary(let entries) = read else {
            Issue.record("not a dictionary: \(read)")
            return
        }
        #expect(entries["text"] == .string("plain"))
        #expect(entries["unicode"] == .string("Grüße, 世界"))
        #expect(entries["long"] == .string(String(repeating: "x", count: 300)))
        #expect(entries["int"] == .integer(42))
        #expect(entries["negative"] == .integer(-7))
        #expect(entries["big"] == .integer(Int64.max))
        #expect(entries["real"] == .real(1.25))
        #expect(entries["yes"] == .bool(true) && entries["no"] == .bool(false))
        #expect(entries["data"] == .data(Data([0, 1, 2, 255])))
        #expect(entries["list"] == .array([.integer(1), .string("two"), .array([.real(3.5)])]))
        #expect(entries["nested"] == .dictionary(["a": .dictionary(["b": .string("c")])]))
    }

    @Test func theTestWriterWritesWhatFoundationReads() throws {
        let data = BinaryPropertyListWriter.data(
            .dictionary([
                "s": .string("Grüße"), "n": .integer(-3), "r": .real(0.5), "d": .data(Data(repeating: 7, count: 20)), "a": .array([.bool(true)]),
            ])
        )
        let object = try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        #expect(object?["s"] as? String == "Grüße")
        #expect(object?["n"] as? Int == -3)
        #expect(object?["r"] as? Double == 0.5)
        #expect(object?["d"] as? Data == Data(repeating: 7, count: 20))
        #expect((object?["a"] as? [Any])?.first as? Bool == true)
    }

    @Test func damagedPropertyListsAreRefusedNotFollowed() throws {
        // One array that contains itself: bplist00, [0xA1, ref 0], offset table [8], trailer.
        var looping = Array("bplist00".utf8) + [0xA1, 0x00, 0x08]
        looping +=
            [0, 0, 0, 0, 0, 0, 1, 1] + BinaryPropertyListWriter.bigEndian(1, 8) + BinaryPropertyListWriter.bigEndian(0, 8)
            + BinaryPropertyListWriter.bigEndian(10, 8)
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.read(Data(looping)) }

        let good = BinaryPropertyListWriter.data(.array([.string("a"), .string("b")]))
        for length in [0, 7, 20, good.count - 1] {
            #expect(throws: BinaryPropertyList.Failure.self, "cut at \(length)") { try BinaryPropertyList.read(good.prefix(length)) }
        }
        var wrongReference = Array(good)
        wrongReference[10] = 0x7F  // the array's first reference, past the objects
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.read(Data(wrongReference)) }
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.read(Data("<plist/>".utf8)) }
        // A trailer whose offset table starts near the top of the 64-bit range.
        var farTable = Array(good)
        for index in (farTable.count - 8)..<farTable.count { farTable[index] = 0xFF }
        #expect(throws: BinaryPropertyList.Failure.self) { try BinaryPropertyList.read(Data(farTable)) }
    }

    @Test func xcodesArchiveOfSourceColorIsTheKeyPath() throws {
        let document = try XcodeMappingDocument.parse(
            Data(contentsOf: CoreDataFixtures.xcodeMappings.appendingPathComponent("Migration1to2.xcmappingmodel/xcmapping.xml")),
            file: nil
        )
        let hexColor = try #require(document.objects.first { $0.attributes["name"] == "hexColor" })
        let data = try #require(hexColor.data("valueexpressiondata") ?? nil)
        #expect(try Expression(keyedArchive: data) == .variable("source", keyPath: ["color"]))
    }

    /// Each kind of expression, archived as Foundation archives it, against its format.
    @Test(arguments: [
        "title", "$source.author.name", "SELF", "$manager", "\"text\"", "42", "1.5", "YES", "nil",
        "$source.price * 1.04", "($source.price + 1) * 2 - $source.discount / 4", "2 ** 3",
        "uppercase:($source.title)", "sum:({1, 2, 3})", "now()",
        "FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"PostToPost\", $source.posts)",
        "{1, \"two\", $source.three}",
    ])
    func everyExpressionKindDecodes(format: String) throws {
        var archive = KeyedArchiveBuilder()
        let root = try archive.build(Expression(format: format))
        #expect(try Expression(keyedArchive: archive.data(root: root)) == Expression(format: format))
    }

    @Test func constantsOfFoundationClassesDecode() throws {
        var archive = KeyedArchiveBuilder()
        let date = archive.object(["NSDate"], ["NS.time": .real(526_914_238.5)])
        let root = archive.aggregate([
            archive.constant(date), archive.constant(archive.object(["NSNull"], [:])),
            archive.constant(archive.add(.data(Data([1, 2])))),
        ])
        let decoded = try Expression(keyedArchive: archive.data(root: root))
        #expect(
            decoded
                == .aggregate([
                    .constant(.date(Date(timeIntervalSinceReferenceDate: 526_914_238.5))), .constant(.null), .constant(.binary(Data([1, 2]))),
                ])
        )
    }

    @Test func kindsValueExpressionsDoNotHaveAreRefusedByName() throws {
        var subquery = KeyedArchiveBuilder()
        let collection = subquery.keyPath(variable: "source", "books")
        let root = subquery.object(["NSSubqueryExpression", "NSExpression"], ["NSExpressionType": .integer(13), "NSCollection": collection])
        expectRefusal(subquery.data(root: root), mentioning: "NSSubqueryExpression")

        var unknownFunction = KeyedArchiveBuilder()
        let call = unknownFunction.builtIn("frobnicate:", [unknownFunction.constant(.integer(1))])
        expectRefusal(unknownFunction.data(root: call), mentioning: "frobnicate:")

        var classConstant = KeyedArchiveBuilder()
        let constant = classConstant.object(
            ["NSConstantValueExpression", "NSExpression"],
            ["NSConstantValueClassName": classConstant.string("NSString")]
        )
        expectRefusal(classConstant.data(root: constant), mentioning: "class")

        var dictionaryConstant = KeyedArchiveBuilder()
        let dictionary = dictionaryConstant.dictionary([("a", dictionaryConstant.string("b"))])
        let dictionaryRoot = dictionaryConstant.constant(dictionary)
        expectRefusal(dictionaryConstant.data(root: dictionaryRoot), mentioning: "NSDictionary")

        #expect(throws: ExpressionError.self) { try Expression(keyedArchive: Data("not an archive".utf8)) }
    }

    private func expectRefusal(_ data: Data, mentioning text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let expression = try Expression(keyedArchive: data)
            Issue.record("decoded as \(expression.format)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .unsupported, sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
        }
    }
}

extension KeyedArchiveBuilder {
    /// The archive of an expression, object by object as Foundation writes it.
    mutating func build(_ expression: Expression) -> Value {
        switch expression {
        case .constant(let value):
            switch value {
            case .null: return constant(Self.null)
            case .string(let text): return constant(string(text))
            case .integer(let number): return constant(add(.integer(number)))
            case .double(let number): return constant(add(.real(number)))
            case .bool(let flag): return constant(add(.bool(flag)))
            default: fatalError("no archive for \(value) in this test")
            }
        case .keyPath(let path): return keyPath(variable: nil, path.joined(separator: "."))
        case .variable(let name, let path): return path.isEmpty ? variable(name) : keyPath(variable: name, path.joined(separator: "."))
        case .evaluatedObject: return evaluatedObject()
        case .arithmetic(let op, let lhs, let rhs):
            let selector = ["+": "add:to:", "-": "from:subtract:", "*": "multiply:by:", "/": "divide:by:", "**": "raise:toPower:"][op.rawValue]!
            return builtIn(selector, [build(lhs), build(rhs)])
        case .function(let name, let arguments): return builtIn(name + ":", arguments.map { build($0) })
        case .functionCall(let target, let selector, let arguments): return function(selector, operand: build(target), arguments.map { build($0) })
        case .aggregate(let items): return aggregate(items.map { build($0) })
        case .object: fatalError("no archive for object IDs in this test")
        }
    }
}
