/// Random identifiers for the wire: request ids, the status page's nonce.
enum RandomHex {
    /// 128 bits from the system's generator, as 32 lower-case hex digits.
    static func bits128() -> String {
        var generator = SystemRandomNumberGenerator()
        return [generator.next() as UInt64, generator.next() as UInt64].map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }
}
