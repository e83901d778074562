import Foundation

/// A binary property list (`bplist00`) read into values, keeping what Foundation's
/// `PropertyListSerialization` hides: the UIDs by which a keyed archive (`NSKeyedArchiver`)
/// links its objects.
///
/// Xcode stores value expressions, user info dictionaries and Transformable values as keyed
/// archives in this format; reading them object by object needs the UIDs as numbers.
///
/// ```swift
/// let root = try BinaryPropertyList.read(data)
/// guard case .dictionary(let archive) = root, case .array(let objects)? = archive["$objects"] else { … }
/// ```
///
/// Every offset and count is checked against the data, and a list that contains itself is
/// refused, so a damaged file gives an error, never a crash or a hang.
enum BinaryPropertyList {
    indirect enum Value: Sendable, Hashable {
        case null
        case bool(Bool)
        case integer(Int64)
        case real(Double)
        case date(Date)
        case data(Data)
        case string(String)
        /// A keyed archive's reference to the object at this index of `$objects`.
        case uid(Int)
        case array([Value])
        case dictionary([String: Value])
    }

    /// Why the data is not a binary property list, in words.
    struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        var description: String
    }

    /// Reads the whole property list.
    static func read(_ data: Data) throws(Failure) -> Value {
        var reader = try Reader(Array(data))
        return try reader.value(at: reader.top, depth: 0)
    }

    private struct Reader {
        let bytes: [UInt8]
        let offsetSize: Int
        let referenceSize: Int
        let offsets: [Int]
        let top: Int
        /// The objects being read, to refuse one that contains itself.
        var open: Set<Int> = []
        /// Values still allowed: an object shared by many lists is read once per use, so a
        /// small damaged file could otherwise unfold into billions.
        var budget: Int

        static let maximumDepth = 512

        init(_ bytes: [UInt8]) throws(Failure) {
            self.bytes = bytes
            guard bytes.count >= 40, bytes.starts(with: Array("bplist0".utf8)) else {
                throw Failure(description: "the data is not a binary property list (it does not start with \"bplist0\")")
            }
            let trailer = bytes.count - 32
            offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = Self.integer(bytes[(trailer + 8)..<(trailer + 16)])
            let topIndex = Self.integer(bytes[(trailer + 16)..<(trailer + 24)])
            let tableStart = Self.integer(bytes[(trailer + 24)..<(trailer + 32)])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, count <= UInt64(trailer),
                topIndex < count, tableStart >= 8, tableStart <= UInt64(trailer),
                tableStart + count * UInt64(offsetSize) <= UInt64(trailer)
            else { throw Failure(description: "the binary property list's trailer is damaged") }
            var offsets: [Int] = []
            offsets.reserveCapacity(Int(count))
            for index in 0..<Int(count) {
                let start = Int(tableStart) + index * offsetSize
                let offset = Self.integer(bytes[start..<(start + offsetSize)])
                guard offset >= 8, offset < UInt64(tableStart) else {
                    throw Failure(description: "object \(index) of the binary property list lies outside it")
                }
                offsets.append(Int(offset))
            }
            self.offsets = offsets
            self.top = Int(topIndex)
            self.budget = max(1 << 20, bytes.count * 4)
        }

        /// A big-endian unsigned integer of up to eight bytes.
        static func integer(_ bytes: ArraySlice<UInt8>) -> UInt64 {
            bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }

        func slice(_ start: Int, _ length: Int) throws(Failure) -> ArraySlice<UInt8> {
            guard length >= 0, start >= 0, start <= bytes.count - length else {
                throw Failure(description: "a value at byte \(start) of the binary property list runs past its end")
            }
            return bytes[start..<(start + length)]
        }

        /// The count in a marker's low nibble, or in the integer that follows when it is 0xF;
        /// and where the contents start.
        func count(marker: UInt8, at offset: Int) throws(Failure) -> (count: Int, start: Int) {
            let nibble = Int(marker & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            let next = try slice(offset + 1, 1).first!
            guard next >> 4 == 0x1 else { throw Failure(description: "a length at byte \(offset) of the binary property list is not an integer") }
            let width = 1 << Int(next & 0x0F)
            guard width <= 8 else { throw Failure(description: "a length at byte \(offset) of the binary property list is too large") }
            let value = Self.integer(try slice(offset + 2, width))
            guard value <= UInt64(bytes.count) else {
                throw Failure(description: "a length at byte \(offset) of the binary property list is larger than the list")
            }
            return (Int(value), offset + 2 + width)
        }

        func references(_ count: Int, at start: Int) throws(Failure) -> [Int] {
            let data = try slice(start, count * referenceSize)
            return (0..<count).map { index in
                let from = data.startIndex + index * referenceSize
                return Int(truncatingIfNeeded: Self.integer(data[from..<(from + referenceSize)]))
            }
        }

        mutating func value(at index: Int, depth: Int) throws(Failure) -> Value {
            guard index >= 0, index < offsets.count else {
                throw Failure(description: "the binary property list refers to object \(index), which it does not have")
            }
            guard depth < Self.maximumDepth, open.insert(index).inserted else {
                throw Failure(description: "the binary property list nests too deeply or contains itself")
            }
            defer { open.remove(index) }
            budget -= 1
            guard budget >= 0 else { throw Failure(description: "the binary property list unfolds into too many values") }
            let offset = offsets[index]
            let marker = try slice(offset, 1).first!
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x00: return .null
                case 0x08: return .bool(false)
                case 0x09: return .bool(true)
                default: break
                }
            case 0x1:
                let width = 1 << Int(marker & 0x0F)
                guard width <= 16 else { break }
                let raw = try slice(offset + 1, width)
                // 16-byte integers hold 64-bit values in their low half.
                let value = Self.integer(raw.suffix(8))
                return .integer(width >= 8 ? Int64(bitPattern: value) : Int64(value))
            case 0x2:
                switch marker & 0x0F {
                case 2: return .real(Double(Float(bitPattern: UInt32(Self.integer(try slice(offset + 1, 4))))))
                case 3: return .real(Double(bitPattern: Self.integer(try slice(offset + 1, 8))))
                default: break
                }
            case 0x3:
                guard marker == 0x33 else { break }
                return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: Self.integer(try slice(offset + 1, 8)))))
            case 0x4:
                let (count, start) = try count(marker: marker, at: offset)
                return .data(Data(try slice(start, count)))
            case 0x5:
                let (count, start) = try count(marker: marker, at: offset)
                return .string(String(decoding: try slice(start, count), as: Unicode.ASCII.self))
            case 0x6:
                let (count, start) = try count(marker: marker, at: offset)
                let raw = try slice(start, count * 2)
                let units = stride(from: raw.startIndex, to: raw.endIndex, by: 2).map { UInt16(raw[$0]) << 8 | UInt16(raw[$0 + 1]) }
                return .string(String(decoding: units, as: UTF16.self))
            case 0x8:
                let width = Int(marker & 0x0F) + 1
                return .uid(Int(truncatingIfNeeded: Self.integer(try slice(offset + 1, width))))
            case 0xA, 0xC:
                let (count, start) = try count(marker: marker, at: offset)
                var items: [Value] = []
                for reference in try references(count, at: start) {
                    items.append(try value(at: reference, depth: depth + 1))
                }
                return .array(items)
            case 0xD:
                let (count, start) = try count(marker: marker, at: offset)
                let keys = try references(count, at: start)
                let values = try references(count, at: start + count * referenceSize)
                var result: [String: Value] = [:]
                for (key, reference) in zip(keys, values) {
                    guard case .string(let name) = try value(at: key, depth: depth + 1) else {
                        throw Failure(description: "a dictionary of the binary property list has a key that is not a string")
                    }
                    result[name] = try value(at: reference, depth: depth + 1)
                }
                return .dictionary(result)
            default:
                break
            }
            throw Failure(description: "byte \(offset) of the binary property list holds an unknown value (marker 0x\(String(marker, radix: 16)))")
        }
    }
}
