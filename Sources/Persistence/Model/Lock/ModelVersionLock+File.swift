import Foundation

extension ModelVersionLock {
    /// Reads the lock at `url`.
    ///
    /// ```swift
    /// let lock = try ModelVersionLock(contentsOf: ModelVersionLock.fileURL(forModelAt: modelURL))
    /// lock.versions.keys.sorted() // ["BookStore", "BookStore 2", …]
    /// ```
    ///
    /// - Throws: ``ModelError`` with code ``ModelError/Code/malformedLock`` naming the file
    ///   when it cannot be read, is not a lock or is of a later format.
    public init(contentsOf url: URL) throws(ModelError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelError(.malformedLock, "cannot read the version lock (\(error.localizedDescription))", file: url.path)
        }
        // The format first: a later format may be shaped otherwise.
        if let header = try? JSONDecoder().decode(Header.self, from: data), header.format != Self.currentFormat {
            throw ModelError(
                .malformedLock,
                "the version lock is of format \(header.format); this framework reads format \(Self.currentFormat): use the release that wrote it",
                file: url.path
            )
        }
        do {
            self = try JSONDecoder().decode(ModelVersionLock.self, from: data)
        } catch {
            throw ModelError(
                .malformedLock,
                "the file is not a version lock: \(Self.describe(error)); restore it from version control, or remove it and lock the versions that shipped again with `persistence lock`",
                file: url.path
            )
        }
    }

    private struct Header: Decodable {
        var format: Int
    }

    /// The lock as its file holds it: JSON, keys sorted, indented, ending in a newline.
    public func fileContents() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Writes the lock to `url` in one piece (a reader never sees half a file).
    public func write(to url: URL) throws {
        try fileContents().write(to: url, options: .atomic)
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context): "not JSON (\(context.debugDescription))"
        case .keyNotFound(let key, let context): "\(path(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context): "\(path(context.codingPath)) is not what a lock holds there"
        default: "\(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "the top level" : "'" + keys.map(\.stringValue).joined(separator: ".") + "'"
    }
}
