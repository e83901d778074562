import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

/// `persistence lock`: records model versions as they shipped in the version lock beside
/// the model (``ModelVersionLock``), so that `persistence validate` and every migration
/// refuse them once edited.
struct LockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Record model versions as they shipped in the version lock beside the model (NAME.versionlock.json).",
        discussion: """
            Commit the lock with the model. `persistence validate`, and every migration of a store through \
            the model's versions, then refuse a locked version whose file changed, naming the entity, the \
            property and what changed. Versions not in the lock may change freely; lock a version when it \
            ships. A locked version is written again only with --replace (for a version that never shipped). \
            Touches no store.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("A version to lock, by name or number (repeatable).", valueName: "version"))
    var version: [String] = []

    @Flag(name: .long, help: "Lock every version of the model.")
    var allVersions = false

    @Flag(name: .long, help: "Write a locked version again as its file is now (for a version that never shipped).")
    var replace = false

    @Option(
        name: .long,
        help: ArgumentHelp("Take a version out of the lock, by its exact name (repeatable): one the model no longer has.", valueName: "version")
    )
    var remove: [String] = []

    func run() async throws {
        try await runReportingErrors {
            let modelURL = URL(fileURLWithPath: models)
            let versions = try loadModels(models)
            guard allVersions || !version.isEmpty || !remove.isEmpty else {
                throw CommandError(
                    "name the versions to lock",
                    hint: "lock the versions that shipped: --version \"\(versions.current.name)\" (repeatable), or --all-versions"
                )
            }
            var chosen: [ManagedObjectModel] = []
            for text in version {
                guard let model = versions.version(namedOrNumbered: text) else {
                    throw CommandError(
                        "the model has no version '\(text)'",
                        hint: "name one of \(versions.versions.map { "'\($0.name)'" }.joined(separator: ", "))"
                    )
                }
                if !chosen.contains(where: { $0.name == model.name }) { chosen.append(model) }
            }
            if allVersions { chosen = versions.versions }
            let lockURL = ModelVersionLock.fileURL(forModelAt: modelURL)
            var lock = versions.lock ?? ModelVersionLock(model: versions.name)
            for name in remove {
                guard lock.versions.removeValue(forKey: name) != nil else {
                    throw CommandError(
                        "'\(name)' is not in the lock",
                        hint: "name one of \(lock.versions.keys.sorted().map { "'\($0)'" }.joined(separator: ", "))"
                    )
                }
            }
            let changed = chosen.filter { model in versions.lockChanges.contains { $0.version == model.name } }
            // A removed entry was counted as a change only because the model lacks its version.
            if !changed.isEmpty && !replace {
                let changes = versions.lockChanges.filter { change in changed.contains { $0.name == change.version } }
                throw CommandError(
                    changes.map(\.description).joined(separator: "; "),
                    hint:
                        "a version that shipped stays as it shipped: restore it and make the change in a new model version. Only for a version that never shipped, write it again with --replace"
                )
            }
            var added: [String] = []
            var kept: [String] = []
            for model in chosen {
                let wasLocked = lock.versions[model.name] != nil
                lock.lock(model)
                if wasLocked && !changed.contains(where: { $0.name == model.name }) { kept.append(model.name) } else { added.append(model.name) }
            }
            try lock.write(to: lockURL)
            for name in remove { print("removed '\(name)' from the lock") }
            for name in added { print("locked '\(name)'") }
            for name in kept { print("'\(name)' was locked already, unchanged") }
            print("\(lockURL.lastPathComponent): \(lock.versions.count) of \(versions.versions.count) versions locked.")
        }
    }
}
