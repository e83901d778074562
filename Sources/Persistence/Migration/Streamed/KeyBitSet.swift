/// A set of primary keys `1…capacity`, one bit each: a million keys take 125 KB.
struct KeyBitSet: Sendable {
    private var words: [UInt64]
    let capacity: Int64
    private(set) var count = 0

    init(capacity: Int64) {
        self.capacity = max(capacity, 0)
        words = Array(repeating: 0, count: Int((self.capacity + 64) / 64))
    }

    func contains(_ key: Int64) -> Bool {
        guard key > 0, key <= capacity else { return false }
        return words[Int(key >> 6)] & (1 << UInt64(key & 63)) != 0
    }

    /// Adds `key`; `false` when it was there already or is out of range.
    @discardableResult
    mutating func insert(_ key: Int64) -> Bool {
        guard key > 0, key <= capacity, !contains(key) else { return false }
        words[Int(key >> 6)] |= 1 << UInt64(key & 63)
        count += 1
        return true
    }

    /// Up to `limit` keys above `key`, in order.
    func keys(after key: Int64, limit: Int) -> [Int64] {
        var result: [Int64] = []
        var next = max(key + 1, 1)
        while next <= capacity, result.count < limit {
            let word = words[Int(next >> 6)] >> UInt64(next & 63)
            if word == 0 {
                next = (next | 63) + 1
                continue
            }
            next += Int64(word.trailingZeroBitCount)
            if next > capacity { break }
            result.append(next)
            next += 1
        }
        return result
    }
}
