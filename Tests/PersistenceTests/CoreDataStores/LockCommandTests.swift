import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

@Suite("persistence lock")
struct LockCommandTests {
    @Test func lockRecordsWhatItIsToldAndValidateRefusesALockedVersionThatChanged() async throws {
        let folder = try ScenarioFolder()
        let models = try ModelVersionLockTests.copyOfTheShippedModel(in: folder)
        let lockFile = ModelVersionLock.fileURL(forModelAt: models)
        try FileManager.default.removeItem(at: lockFile)

        let unnamed = try await persistenceCommand.run(["lock", "--models", models.path])
        #expect(unnamed.status != 0)
        #expect(unnamed.stderr.contains("name the versions to lock"), "\(unnamed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: lockFile.path), "a refused lock writes nothing")

        let locked = try await persistenceCommand.run(["lock", "--models", models.path, "--version", "4", "--version", "BookStore 3"])
        #expect(locked.status == 0, "\(locked.stderr)")
        #expect(locked.stdout.contains("locked 'BookStore 4'\nlocked 'BookStore 3'\n"), "\(locked.stdout)")
        #expect(locked.stdout.contains("BookStore.versionlock.json: 2 of 5 versions locked."), "\(locked.stdout)")
        #expect(try ModelVersionLock(contentsOf: lockFile).versions.keys.sorted() == ["BookStore 3", "BookStore 4"])

        let clean = try await persistenceCommand.run(["validate", "--models", models.path])
        #expect(clean.status == 0, "\(clean.stdout)")
        #expect(clean.stdout.contains("Checked 5 model versions, 0 mapping files, 2 locked version(s) unchanged: no problems."), "\(clean.stdout)")

        // A version not in the lock may change.
        try ModelVersionLockTests.edit(models, version: "BookStore 5") {
            $0.replacingOccurrences(of: #"name="title" attributeType="String""#, with: #"name="title" optional="YES" attributeType="String""#)
        }
        #expect(try await persistenceCommand.run(["validate", "--models", models.path]).status == 0)

        try ModelVersionLockTests.edit(models, version: "BookStore 4") {
            $0.replacingOccurrences(of: #"name="price" attributeType="Float""#, with: #"name="price" attributeType="Double""#)
        }
        let changed = try await persistenceCommand.run(["validate", "--models", models.path])
        #expect(changed.status != 0)
        #expect(
            changed.stdout.contains(
                "error: \(lockFile.path): 'BookStore 4' changed since it was locked: Publication.price: type Float → Double. Restore the version as it shipped and make the change in a new model version; lock that when it ships\n"
            ),
            "\(changed.stdout)"
        )
        #expect(changed.stdout.contains("Checked 5 model versions, 0 mapping files: 1 problem."), "\(changed.stdout)")

        let before = try Data(contentsOf: lockFile)
        let relock = try await persistenceCommand.run(["lock", "--models", models.path, "--version", "4"])
        #expect(relock.status != 0)
        #expect(relock.stderr.contains("'BookStore 4' changed since it was locked: Publication.price: type Float → Double"), "\(relock.stderr)")
        #expect(relock.stderr.contains("--replace"), "\(relock.stderr)")
        #expect(try Data(contentsOf: lockFile) == before, "a refused lock leaves the file as it was")

        let replaced = try await persistenceCommand.run(["lock", "--models", models.path, "--version", "4", "--replace"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try await persistenceCommand.run(["validate", "--models", models.path]).status == 0)
    }

    @Test func removeTakesOutALockedVersionTheModelNoLongerHas() async throws {
        let folder = try ScenarioFolder()
        let models = try ModelVersionLockTests.copyOfTheShippedModel(in: folder)
        let lockFile = ModelVersionLock.fileURL(forModelAt: models)
        var lock = try ModelVersionLock(contentsOf: lockFile)
        lock.versions["BookStore 6"] = lock.versions["BookStore 5"]
        try lock.write(to: lockFile)
        #expect(try await persistenceCommand.run(["validate", "--models", models.path]).status != 0)

        let unknown = try await persistenceCommand.run(["lock", "--models", models.path, "--remove", "BookStore 7"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("'BookStore 7' is not in the lock"), "\(unknown.stderr)")

        let removed = try await persistenceCommand.run(["lock", "--models", models.path, "--remove", "BookStore 6"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("removed 'BookStore 6' from the lock"), "\(removed.stdout)")
        #expect(removed.stdout.contains("5 of 5 versions locked."), "\(removed.stdout)")
        #expect(
            try ModelVersionLock(contentsOf: lockFile).versions.keys.sorted() == [
                "BookStore", "BookStore 2", "BookStore 3", "BookStore 4", "BookStore 5",
            ]
        )
        #expect(try await persistenceCommand.run(["validate", "--models", models.path]).status == 0)
    }

    @Test func lockRefusesAVersionTheModelDoesNotHave() async throws {
        let folder = try ScenarioFolder()
        let models = try ModelVersionLockTests.copyOfTheShippedModel(in: folder)
        let before = try Data(contentsOf: ModelVersionLock.fileURL(forModelAt: models))
        let output = try await persistenceCommand.run(["lock", "--models", models.path, "--version", "9"])
        #expect(output.status != 0)
        #expect(output.stderr.contains("the model has no version '9'"), "\(output.stderr)")
        #expect(try Data(contentsOf: ModelVersionLock.fileURL(forModelAt: models)) == before)
    }
}
