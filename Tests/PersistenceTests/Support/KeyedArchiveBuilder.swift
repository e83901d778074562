import Foundation

@testable import Persistence

/// Writes binary property lists and `NSKeyedArchiver`-shaped archives, for tests of the
/// readers: Foundation on Linux writes no UIDs and archives no `NSExpression`, so the
/// archives Xcode would write are built here object by object, in the same layout
/// (`$objects`, `$top.root`, `$class` → `$classname`/`$classes`).
///
/// ```swift
/// var archive = KeyedArchiveBuilder()
/// let root = archive.keyPath(variable: "source", "color")
/// let data = archive.data(root: root)   // what Xcode stores for `$source.color`
/// ```
struct KeyedArchiveBuilder {
    typealias Value = BinaryPropertyList.Value

    private var objects: [Value] = [.string("$null")]
    private var classes: [String: Value] = [:]

    /// `$null`: a missing object.
    static let null = Value.uid(0)

    /// Adds a value to `$objects` and returns its UID.
    mutating func add(_ value: Value) -> Value {
        objects.append(value)
        return .uid(objects.count - 1)
    }

    /// Adds an object of the class (with its superclasses) and returns its UID.
    mutating func object(_ classChain: [String], _ fields: [String: Value]) -> Value {
        let name = classChain[0]
        let classReference =
            classes[name] ?? add(.dictionary(["$classname": .string(name), "$classes": .array((classChain + ["NSObject"]).map(Value.string))]))
        classes[name] = classReference
        var fields = fields
        fields["$class"] = classReference
        return add(.dictionary(fields))
    }

    mutating func string(_ text: String) -> Value { add(.string(text)) }

    mutating func array(_ items: [Value]) -> Value { object(["NSArray"], ["NS.objects": .array(items)]) }

    mutating func dictionary(_ entries: [(String, Value)]) -> Value {
        let keys = entries.map { string($0.0) }
        return object(["NSDictionary"], ["NS.keys": .array(keys), "NS.objects": .array(entries.map(\.1))])
    }

    // MARK: NSExpression, as Foundation archives it

    mutating func constant(_ value: Value) -> Value {
        object(["NSConstantValueExpression", "NSExpression"], ["NSExpressionType": .integer(0), "NSConstantValue": value])
    }

    mutating func evaluatedObject() -> Value {
        object(["NSSelfExpression", "NSExpression"], ["NSExpressionType": .integer(1)])
    }

    mutating func variable(_ name: String) -> Value {
        object(["NSVariableExpression", "NSExpression"], ["NSExpressionType": .integer(2), "NSVariable": string(name)])
    }

    /// `$variable.a.b` (or `a.b` on `SELF` without a variable), archived as
    /// `NSKeyPathExpression`: `valueForKeyPath:` on the operand with a key path specifier.
    mutating func keyPath(variable: String?, _ path: String) -> Value {
        let operand = variable.map { self.variable($0) } ?? evaluatedObject()
        let specifier = object(["NSKeyPathSpecifierExpression", "NSExpression"], ["NSExpressionType": .integer(10), "NSKeyPath": string(path)])
        return object(
            ["NSKeyPathExpression", "NSFunctionExpression", "NSExpression"],
            [
                "NSExpressionType": .integer(4), "NSSelectorName": string("valueForKeyPath:"), "NSOperand": operand,
                "NSArguments": array([specifier]),
            ]
        )
    }

    /// A built-in function (`add:to:`, `uppercase:`), which stands on `_NSPredicateUtilities`.
    mutating func builtIn(_ selector: String, _ arguments: [Value]) -> Value {
        let utilities = object(
            ["NSConstantValueExpression", "NSExpression"],
            ["NSExpressionType": .integer(0), "NSConstantValueClassName": string("_NSPredicateUtilities")]
        )
        return function(selector, operand: utilities, arguments)
    }

    /// `FUNCTION(operand, "selector", arguments…)`.
    mutating func function(_ selector: String, operand: Value, _ arguments: [Value]) -> Value {
        object(
            ["NSFunctionExpression", "NSExpression"],
            [
                "NSExpressionType": .integer(4), "NSSelectorName": string(selector), "NSOperand": operand, "NSArguments": array(arguments),
            ]
        )
    }

    mutating func aggregate(_ items: [Value]) -> Value {
        object(["NSAggregateExpression", "NSExpression"], ["NSExpressionType": .integer(14), "NSCollection": array(items)])
    }

    /// The archive with `root` at `$top.root`.
    func data(root: Value) -> Data {
        BinaryPropertyListWriter.data(
            .dictionary([
                "$version": .integer(100_000), "$archiver": .string("NSKeyedArchiver"),
                "$top": .dictionary(["root": root]), "$objects": .array(objects),
            ])
        )
    }
}

/// A `bplist00` writer: every value its own object, references of four bytes, offsets of eight.
enum BinaryPropertyListWriter {
    static func data(_ root: BinaryPropertyList.Value) -> Data {
        var objects: [[UInt8]] = []
        _ = append(root, to: &objects)
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let table = bytes.count
        for offset in offsets { bytes += bigEndian(UInt64(offset), 8) }
        bytes += [0, 0, 0, 0, 0, 0, 8, 4]
        bytes += bigEndian(UInt64(objects.count), 8) + bigEndian(0, 8) + bigEndian(UInt64(table), 8)
        return Data(bytes)
    }

    static func bigEndian(_ value: UInt64, _ width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// A marker with a count: in the low nibble below 15, else 0xF and an integer after it.
    static func header(_ kind: UInt8, _ count: Int) -> [UInt8] {
        count < 15 ? [kind << 4 | UInt8(count)] : [kind << 4 | 0x0F, 0x13] + bigEndian(UInt64(count), 8)
    }

    /// Appends the value (and, first, a slot for it, so that the root is object 0) and returns its index.
    static func append(_ value: BinaryPropertyList.Value, to objects: inout [[UInt8]]) -> Int {
        let index = objects.count
        objects.append([])
        func references(_ items: [BinaryPropertyList.Value]) -> [UInt8] {
            items.flatMap { bigEndian(UInt64(append($0, to: &objects)), 4) }
        }
        let bytes: [UInt8]
        switch value {
        case .null: bytes = [0x00]
        case .bool(let flag): bytes = [flag ? 0x09 : 0x08]
        case .integer(let number): bytes = [0x13] + bigEndian(UInt64(bitPattern: number), 8)
        case .real(let number): bytes = [0x23] + bigEndian(number.bitPattern, 8)
        case .date(let date): bytes = [0x33] + bigEndian(date.timeIntervalSinceReferenceDate.bitPattern, 8)
        case .data(let data): bytes = header(0x4, data.count) + Array(data)
        case .string(let text) where text.utf8.allSatisfy { $0 < 0x80 }: bytes = header(0x5, text.utf8.count) + Array(text.utf8)
        case .string(let text): bytes = header(0x6, text.utf16.count) + text.utf16.flatMap { bigEndian(UInt64($0), 2) }
        case .uid(let reference): bytes = [0x83] + bigEndian(UInt64(reference), 4)
        case .array(let items): bytes = header(0xA, items.count) + references(items)
        case .dictionary(let entries):
            let sorted = entries.sorted { $0.key < $1.key }
            bytes = header(0xD, sorted.count) + references(sorted.map { .string($0.key) }) + references(sorted.map(\.value))
        }
        objects[index] = bytes
        return index
    }
}
