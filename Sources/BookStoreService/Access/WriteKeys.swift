import Crypto
import Foundation

/// The keys that let a client write (`Authorization: Bearer <key>`), read from a file so
/// that they never appear in a command line, an environment listing or a log.
///
/// The file holds one key per line; blank lines and lines starting with `#` are skipped.
/// Several keys let them be rotated: add the new one, move the clients to it, remove the old.
///
/// ```swift
/// let keys = try WriteKeys(contentsOfFile: "/run/secrets/bookstore_write_keys")
/// keys.accepts("d3Jvbmcga2V5…")   // false
/// ```
///
/// Only SHA-256 digests of the keys are kept, and a candidate is compared with every one of
/// them in constant time: how long a refusal takes says nothing about how close it came.
public struct WriteKeys: Sendable {
    /// The shortest key taken: shorter ones could be guessed.
    public static let minimumLength = 16

    /// The keys' SHA-256 digests, 32 bytes each.
    private let digests: [[UInt8]]

    /// How many keys there are.
    public var count: Int { digests.count }

    /// Keys given in code (tests, an embedding application).
    ///
    /// - Throws: ``WriteKeyFileError`` for an empty list or a key that is too short or has
    ///   characters a bearer token cannot carry (`line` is then the key's place, from 1).
    public init(_ keys: [String]) throws(WriteKeyFileError) {
        try self.init(keys, file: nil)
    }

    /// `file`: where the keys were read, `nil` for keys given in code.
    private init(_ keys: [String], file: String?) throws(WriteKeyFileError) {
        guard !keys.isEmpty else { throw WriteKeyFileError(.noKey, file: file) }
        for (index, key) in keys.enumerated() { try Self.check(key, file: file, line: index + 1) }
        digests = keys.map { Array(SHA256.hash(data: Data($0.utf8))) }
    }

    /// Reads the keys in the file at `path`.
    ///
    /// - Throws: ``WriteKeyFileError`` saying what is wrong, where, and what to do: the file
    ///   cannot be read, holds no key, or a line's key is too short or has spaces or
    ///   characters a bearer token cannot carry.
    public init(contentsOfFile path: String) throws(WriteKeyFileError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw WriteKeyFileError(.unreadable(reason: Self.reason(error)), file: path)
        }
        var keys: [String] = []
        // `\.isNewline`: a CRLF line end is one Character, which splitting at "\n" would miss.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let key = line.trimmingCharacters(in: .whitespaces)
            if key.isEmpty || key.hasPrefix("#") { continue }
            try Self.check(key, file: path, line: index + 1)
            keys.append(key)
        }
        try self.init(keys, file: path)
    }

    /// Whether `candidate` is one of the keys. Every key is compared, whatever matches.
    public func accepts(_ candidate: some StringProtocol) -> Bool {
        let digest = Array(SHA256.hash(data: Data(candidate.utf8)))
        // Every byte of every key is compared, whatever matched: `matched` is 1 for each key
        // whose 32 bytes all agree, built without a branch on the bytes.
        var matched: UInt8 = 0
        for key in digests {
            var difference: UInt8 = 0
            for index in 0..<digest.count { difference |= key[index] ^ digest[index] }
            matched |= UInt8(truncatingIfNeeded: (Int(difference) - 1) >> 8) & 1
        }
        return matched != 0
    }

    private static func check(_ key: String, file: String?, line: Int) throws(WriteKeyFileError) {
        // RFC 6750's b64token: letters, digits and -._~+/ with trailing '='.
        let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
        guard key.unicodeScalars.allSatisfy(allowed.contains) else { throw WriteKeyFileError(.unusableCharacters, file: file, line: line) }
        guard key.count >= minimumLength else { throw WriteKeyFileError(.tooShort(length: key.count), file: file, line: line) }
    }

    private static func reason(_ error: any Error) -> String {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        if let code = underlying?.code, underlying?.domain == NSPOSIXErrorDomain, let text = strerror(Int32(code)) {
            return String(cString: text).lowercased()
        }
        switch (error as NSError).code {
        case NSFileReadNoSuchFileError: return "no such file"
        case NSFileReadNoPermissionError: return "permission denied"
        case NSFileReadInapplicableStringEncodingError: return "it is not UTF-8 text"
        default: return "it cannot be read"
        }
    }
}
