/// A write key file that cannot be used. Its description says what, where and what to do,
/// and never shows a key.
///
/// ```
/// the write key file keys.txt, line 2: a key of 8 characters is too short; make keys of at least 16 characters; `openssl rand -base64 32` prints a good one
/// ```
public struct WriteKeyFileError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Sendable, Equatable {
        /// The file cannot be read: missing, not allowed, not UTF-8 text.
        case unreadable(reason: String)
        /// No line holds a key (blank lines and `#` comments only).
        case noKey
        /// A key shorter than ``WriteKeys/minimumLength``.
        case tooShort(length: Int)
        /// A key with characters a bearer token cannot carry.
        case unusableCharacters
    }

    /// Why the file was refused.
    public let reason: Reason
    /// The key file; `nil` for keys given in code.
    public let file: String?
    /// The line of the key in the file (its place in the list given in code), from 1.
    public let line: Int?

    init(_ reason: Reason, file: String?, line: Int? = nil) {
        self.reason = reason
        self.file = file
        self.line = line
    }

    static let howToMakeOne = "`openssl rand -base64 32` prints a good one"

    /// What is wrong with which file (never a key), and what to do.
    public var description: String {
        let place =
            file.map { "the write key file \($0)" + (line.map { ", line \($0)" } ?? "") }
            ?? "the write keys given" + (line.map { ", key \($0)" } ?? "")
        switch reason {
        case .unreadable(let reason):
            return "\(place) cannot be read (\(reason)); check the path given to --write-key-file or BOOKSTORE_WRITE_KEY_FILE"
        case .noKey:
            return "\(place) holds no key; write one key per line; \(Self.howToMakeOne)"
        case .tooShort(let length):
            return
                "\(place): a key of \(length) characters is too short; make keys of at least \(WriteKeys.minimumLength) characters; \(Self.howToMakeOne)"
        case .unusableCharacters:
            return
                "\(place): the key has characters a bearer token cannot carry (spaces, quotes, non-ASCII); use letters, digits and -._~+/=; \(Self.howToMakeOne)"
        }
    }
}
