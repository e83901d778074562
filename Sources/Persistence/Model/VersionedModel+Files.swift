import Foundation

extension VersionedModel {
    /// The file in an `.xcdatamodeld` naming the current version.
    static let currentVersionFile = ".xccurrentversion"
    static let currentVersionKey = "_XCCurrentVersionName"

    /// Writes the whole bundle as Xcode lays it out: one `.xcdatamodel` folder with a
    /// `contents` file per version, and `.xccurrentversion`; and the version lock beside the
    /// folder when the versions have one (``lock``).
    ///
    /// ```swift
    /// try versions.write(to: URL(fileURLWithPath: "Migrations/BookStore.xcdatamodeld"))
    /// ```
    ///
    /// - Throws: the file system's error if a folder or file cannot be written.
    public func write(to url: URL) throws {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: url, withIntermediateDirectories: true)
        for version in versions {
            let folder = url.appendingPathComponent(version.name + ".xcdatamodel")
            try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            try version.xmlData().write(to: folder.appendingPathComponent("contents"), options: .atomic)
        }
        let plist: [String: Any] = [Self.currentVersionKey: current.name + ".xcdatamodel"]
        let data = try PropertyListSerialization.data(fromPropertyList: plist, format: .xml, options: 0)
        try data.write(to: url.appendingPathComponent(Self.currentVersionFile), options: .atomic)
        if let lock { try lock.write(to: ModelVersionLock.fileURL(forModelAt: url)) }
    }

    /// The current version's name: the one `.xccurrentversion` names, without the
    /// `.xcdatamodel` extension, or the only version where there is no such file.
    ///
    /// Xcode writes `.xccurrentversion` only once a model has a second version, and Core Data
    /// loads a one-version model without it; with several, which is current cannot be guessed.
    static func currentVersionName(in url: URL, versions: [String]) throws(ModelError) -> String {
        let file = url.appendingPathComponent(currentVersionFile)
        guard let data = FileManager.default.contents(atPath: file.path) else {
            if FileManager.default.fileExists(atPath: file.path) {
                throw ModelError(.missingFile, "cannot read \(currentVersionFile); make it readable", file: file.path)
            }
            if versions.count == 1 { return versions[0] }
            let names = versions.map { "\(quoted: $0)" }.joined(separator: ", ")
            throw ModelError(
                .missingFile,
                "the model has \(versions.count) versions (\(names)) and no \(currentVersionFile) naming the current one; "
                    + "choose it in Xcode (File inspector ▸ Model Version ▸ Current), which writes the file",
                file: file.path
            )
        }
        let plist: Any
        do {
            plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw ModelError(.malformedXML, "\(currentVersionFile) is not a property list (\(error.localizedDescription))", file: file.path)
        }
        guard let dictionary = plist as? [String: Any], let name = dictionary[currentVersionKey] as? String, !name.isEmpty else {
            throw ModelError(.missingAttribute, "\(currentVersionFile) has no \(currentVersionKey) string", file: file.path)
        }
        return name.hasSuffix(".xcdatamodel") ? String(name.dropLast(".xcdatamodel".count)) : name
    }

    /// Natural order: runs of digits compare as numbers, so "BookStore 2" < "BookStore 10".
    static func naturallyPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        let left = chunks(lhs)
        let right = chunks(rhs)
        for (a, b) in zip(left, right) where a != b {
            if let x = UInt64(a), let y = UInt64(b) {
                if x != y { return x < y }
                continue  // same number, different leading zeros: fall through to text order below
            }
            return a < b
        }
        return left.count != right.count ? left.count < right.count : lhs < rhs
    }

    private static func chunks(_ text: String) -> [String] {
        var result: [String] = []
        var current = ""
        var currentIsDigit: Bool?
        for character in text {
            let isDigit = character.isASCII && character.isNumber
            if currentIsDigit != isDigit, !current.isEmpty {
                result.append(current)
                current = ""
            }
            current.append(character)
            currentIsDigit = isDigit
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}
