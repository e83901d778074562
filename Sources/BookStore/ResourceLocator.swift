import Foundation

/// Finds the project's data folders (`Migrations`, `Seeds`) at run time.
///
/// In order: the `BOOKSTORE_RESOURCES` environment variable (a folder holding them), the
/// current directory and its parents, the executable's folder and its parents, and the
/// source tree the binary was built from.
public enum ResourceLocator {
    /// The folder `name` holding `marker`, looked for in the places above.
    ///
    /// - Throws: ``BookStoreError`` listing where it looked, when none holds it.
    public static func directory(named name: String, containing marker: String) throws -> URL {
        let fileManager = FileManager.default
        var roots: [URL] = []
        if let configured = ProcessInfo.processInfo.environment["BOOKSTORE_RESOURCES"], !configured.isEmpty {
            roots.append(URL(fileURLWithPath: configured))
        }
        roots.append(contentsOf: ancestors(of: URL(fileURLWithPath: fileManager.currentDirectoryPath)))
        roots.append(
            contentsOf: ancestors(of: URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent().standardizedFileURL)
        )
        // Sources/BookStore/ResourceLocator.swift → the package root.
        roots.append(URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent())
        for root in roots {
            let candidate = root.appendingPathComponent(name)
            if fileManager.fileExists(atPath: candidate.appendingPathComponent(marker).path) {
                return candidate
            }
        }
        throw BookStoreError(
            "cannot find the \(name) folder (looked for \(name)/\(marker) here, above the current directory and beside the executable)",
            hint: "run from the project folder or set BOOKSTORE_RESOURCES to the folder that holds \(name)/"
        )
    }

    private static func ancestors(of url: URL) -> [URL] {
        var result: [URL] = []
        var current = url.standardizedFileURL
        for _ in 0..<8 {
            result.append(current)
            let parent = current.deletingLastPathComponent()
            if parent.path == current.path { break }
            current = parent
        }
        return result
    }
}
