import Foundation

/// An `NSKeyedArchiver` archive, read object by object without instantiating any class.
///
/// Xcode archives value expressions (`NSExpression`) and user info dictionaries this way.
/// Foundation on Linux has no `NSExpression` to unarchive into, so a reader walks the
/// archive's object graph instead: `$top.root` is a UID into `$objects`, each object a
/// dictionary whose `$class` UID names its class and whose other keys are its fields.
///
/// ```swift
/// let archive = try KeyedArchive(data)
/// guard case .object(let root) = try archive.root else { … }
/// root.className                               // "NSKeyPathExpression"
/// try archive.item(root.fields["NSSelectorName"]) // .string("valueForKeyPath:")
/// ```
struct KeyedArchive {
    typealias Failure = BinaryPropertyList.Failure

    /// An archived object of a class other than the plain values.
    struct Object: Hashable {
        /// `NSKeyPathExpression`.
        var className: String
        /// The class and its superclasses: `NSKeyPathExpression`, `NSFunctionExpression`, `NSExpression`, `NSObject`.
        var classes: [String]
        var fields: [String: BinaryPropertyList.Value]

        func isKind(of name: String) -> Bool {
            className == name || classes.contains(name)
        }
    }

    /// A field's value once its UID is followed.
    enum Item: Hashable {
        case null
        case string(String)
        case integer(Int64)
        case real(Double)
        case bool(Bool)
        case data(Data)
        case object(Object)
    }

    private let objects: [BinaryPropertyList.Value]
    private let rootValue: BinaryPropertyList.Value

    init(_ data: Data) throws(Failure) {
        guard case .dictionary(let archive) = try BinaryPropertyList.read(data),
            case .array(let objects)? = archive["$objects"], case .dictionary(let top)? = archive["$top"]
        else { throw Failure(description: "the data is not a keyed archive (it has no $objects and $top)") }
        guard let root = top["root"] ?? top.first?.value else {
            throw Failure(description: "the keyed archive's $top is empty")
        }
        self.objects = objects
        self.rootValue = root
    }

    /// The archived root object.
    var root: Item {
        get throws(Failure) { try item(rootValue) }
    }

    /// A field's value: a UID is followed into `$objects`; `$null` is ``Item/null``.
    func item(_ value: BinaryPropertyList.Value?) throws(Failure) -> Item {
        switch value {
        case nil, .null?: return .null
        case .bool(let v)?: return .bool(v)
        case .integer(let v)?: return .integer(v)
        case .real(let v)?: return .real(v)
        case .string(let v)?: return .string(v)
        case .data(let v)?: return .data(v)
        case .date?, .array?, .dictionary?:
            throw Failure(description: "the keyed archive holds a value inline where it should refer to an object")
        case .uid(let index)?:
            guard index >= 0, index < objects.count else {
                throw Failure(description: "the keyed archive refers to object \(index) of \(objects.count)")
            }
            switch objects[index] {
            case .string("$null"): return .null
            case .dictionary(let fields):
                guard case .uid(let classIndex)? = fields["$class"], classIndex >= 0, classIndex < objects.count,
                    case .dictionary(let description) = objects[classIndex],
                    case .string(let className)? = description["$classname"]
                else { throw Failure(description: "object \(index) of the keyed archive does not name its class") }
                var classes: [String] = []
                if case .array(let names)? = description["$classes"] {
                    for case .string(let name) in names { classes.append(name) }
                }
                return .object(Object(className: className, classes: classes, fields: fields))
            case .uid:
                throw Failure(description: "object \(index) of the keyed archive is a reference, not an object")
            case let other:
                return try item(other)
            }
        }
    }

    /// The elements of an archived `NSArray`, `NSOrderedSet` or `NSSet`.
    func elements(of item: Item) throws(Failure) -> [Item] {
        guard case .object(let object) = item, case .array(let references)? = object.fields["NS.objects"],
            object.fields["NS.keys"] == nil
        else { throw Failure(description: "the keyed archive holds \(item.summary) where it should hold an array") }
        var result: [Item] = []
        for reference in references { result.append(try self.item(reference)) }
        return result
    }

    /// The entries of an archived `NSDictionary`, keys as strings.
    func entries(of item: Item) throws(Failure) -> [(key: String, value: Item)] {
        guard case .object(let object) = item, case .array(let keys)? = object.fields["NS.keys"],
            case .array(let values)? = object.fields["NS.objects"], keys.count == values.count
        else { throw Failure(description: "the keyed archive holds \(item.summary) where it should hold a dictionary") }
        var result: [(key: String, value: Item)] = []
        for (key, value) in zip(keys, values) {
            guard case .string(let name) = try self.item(key).plain else {
                throw Failure(description: "a dictionary in the keyed archive has a key that is not a string")
            }
            result.append((name, try self.item(value)))
        }
        return result
    }

    /// A plain Foundation value as an attribute value: a string, a number, a Boolean, a date,
    /// data, a UUID, a URL or null. Collections and other classes are refused.
    func attributeValue(of item: Item) throws(Failure) -> AttributeValue {
        let archived = item
        switch archived.plain {
        case .null: return .null
        case .string(let v): return .string(v)
        case .integer(let v): return .integer(v)
        case .real(let v): return .double(v)
        case .bool(let v): return .bool(v)
        case .data(let v): return .binary(v)
        case .object(let object):
            if object.isKind(of: "NSDate"), let seconds = Self.number(object.fields["NS.time"]) {
                return .date(Date(timeIntervalSinceReferenceDate: seconds))
            }
            if object.isKind(of: "NSUUID"), case .data(let bytes)? = object.fields["NS.uuidbytes"], bytes.count == 16 {
                let b = Array(bytes)
                return .uuid(UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])))
            }
            if object.isKind(of: "NSURL"), case .string(let relative) = try self.item(object.fields["NS.relative"]).plain,
                case .null = try self.item(object.fields["NS.base"]), let url = URL(string: relative)
            {
                return .uri(url)
            }
            throw Failure(description: "the keyed archive holds \(archived.summary), which is not a string, number, date, data, UUID or URL")
        }
    }

    private static func number(_ value: BinaryPropertyList.Value?) -> Double? {
        switch value {
        case .real(let v)?: v
        case .integer(let v)?: Double(v)
        default: nil
        }
    }
}

extension KeyedArchive.Item {
    /// The item with an archived `NSString`, `NSData` or `NSNull` object read as the plain value it holds.
    var plain: KeyedArchive.Item {
        guard case .object(let object) = self else { return self }
        if object.isKind(of: "NSNull") { return .null }
        if object.isKind(of: "NSString"), case .string(let text)? = object.fields["NS.string"] { return .string(text) }
        if object.isKind(of: "NSData"), case .data(let bytes)? = object.fields["NS.data"] { return .data(bytes) }
        return self
    }

    /// What the item is, for messages: `an NSPredicate object`, `the string "x"`.
    var summary: String {
        switch self {
        case .null: "null"
        case .string(let v): "the string \"\(v.prefix(40))\""
        case .integer(let v): "the number \(v)"
        case .real(let v): "the number \(v)"
        case .bool(let v): "the Boolean \(v)"
        case .data(let v): "\(v.count) bytes of data"
        case .object(let object): "an \(object.className) object"
        }
    }
}
