import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// What a step will lose, found from its models and mapping models and counted on a store:
/// `migrate --plan` and `persistence validate` show it.
@Suite struct DataLossWarningTests {
    /// Notes → Notes 2 drops `Scrap`, `Note.draft` and the folders, narrows `Note.tags` to
    /// one tag, narrows `priority` to Integer 16, makes `score` an integer and limits a
    /// title to 10 characters. Each is a lightweight change inference accepts.
    /// The same in both versions.
    static let tag = """
        <entity name="Tag" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="tags" inverseEntity="Note"/>
        </entity>
        """

    static let v1 = model(
        "Notes",
        """
        <entity name="Note" syncable="YES">
            <attribute name="title" optional="YES" attributeType="String"/>
            <attribute name="draft" optional="YES" attributeType="String"/>
            <attribute name="priority" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
            <attribute name="score" optional="YES" attributeType="Double" usesScalarValueType="YES"/>
            <relationship name="tags" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
            <relationship name="folder" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Folder" inverseName="notes" inverseEntity="Folder"/>
        </entity>
        \(tag)
        <entity name="Folder" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <relationship name="notes" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Note" inverseName="folder" inverseEntity="Note"/>
        </entity>
        <entity name="Scrap" syncable="YES">
            <attribute name="text" optional="YES" attributeType="String"/>
        </entity>
        """
    )

    static let v2 = model(
        "Notes 2",
        """
        <entity name="Note" syncable="YES">
            <attribute name="title" optional="YES" maxValueString="10" attributeType="String"/>
            <attribute name="priority" optional="YES" attributeType="Integer 16" usesScalarValueType="YES"/>
            <attribute name="score" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
            <relationship name="tags" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Tag" inverseName="notes" inverseEntity="Tag"/>
        </entity>
        \(tag)
        <entity name="Folder" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
        </entity>
        """
    )

    /// A version from its entities, kept as a result so that the fixtures can be static.
    static func model(_ name: String, _ entities: String) -> Result<ManagedObjectModel, any Error> {
        Result { try InPlaceFixtures.model(name, entities) }
    }

    static func versions() throws -> VersionedModel {
        try VersionedModel(name: "Notes", versions: [try v1.get(), try v2.get()], currentVersionName: "Notes 2")
    }

    /// What the seeded store holds of each loss.
    struct Seeded {
        static let titles = ["short", "a title of more than ten", "another long title", "ok", "eleven char", nil, "tiny"]
        static let drafts = ["d1", nil, "d3", "d4", nil, "d6", nil]
        static let priorities: [Int64?] = [1, 40_000, -40_000, nil, 32_767, 7, 0]
        static let scores: [Double?] = [1.5, 2, nil, 3.25, 4, nil, 5]
        /// Tag indexes per note: notes 0 and 1 have several.
        static let tags: [[Int]] = [[0, 1], [0, 1, 2], [2], [], [], [1], []]
        static let folders: [Int?] = [0, 0, 1, nil, 1, 1, nil]
        static let scraps = 3
    }

    static func seed(_ url: StoreURL) async throws {
        try await makeClosedStore(at: url, model: try v1.get()) { container in
            let context = container.newContext()
            let tags = try (0..<3).map { index in
                let tag = try context.insertObject(entityName: "Tag")
                tag.setValue(.string("tag \(index)"), forKey: "name")
                return tag
            }
            let folders = try (0..<2).map { index in
                let folder = try context.insertObject(entityName: "Folder")
                folder.setValue(.string("folder \(index)"), forKey: "name")
                return folder
            }
            for index in Seeded.titles.indices {
                let note = try context.insertObject(entityName: "Note")
                note.setValue(Seeded.titles[index].map(AttributeValue.string) ?? .null, forKey: "title")
                note.setValue(Seeded.drafts[index].map(AttributeValue.string) ?? .null, forKey: "draft")
                note.setValue(Seeded.priorities[index].map(AttributeValue.integer) ?? .null, forKey: "priority")
                note.setValue(Seeded.scores[index].map(AttributeValue.double) ?? .null, forKey: "score")
                for tag in Seeded.tags[index] { note.addDestination(tags[tag], forKey: "tags") }
                if let folder = Seeded.folders[index] { note.setDestination(folders[folder], forKey: "folder") }
            }
            for index in 0..<Seeded.scraps {
                try context.insertObject(entityName: "Scrap").setValue(.string("scrap \(index)"), forKey: "text")
            }
            try await context.save()
        }
    }

    /// Each warning's text and rows, in the order the plan gives them.
    static func lines(_ warnings: [DataLossWarning]) -> [String] {
        warnings.map { "\($0.isCertain ? "warning" : "note"): \($0)" }
    }

    @Test(arguments: TestEngine.allCases)
    func anInferredStepSaysWhatItDropsWithTheRowsConcerned(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await Self.seed(url)
            let before = try await StoreSnapshot(url)
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: try Self.versions()), logger: testLogger)
            let plan = try await migrator.plan(forStoreAt: url)
            #expect(plan.steps.count == 1)
            // Found without the store: no counts.
            #expect(plan.steps[0].dataLossWarnings.allSatisfy { $0.affectedRows == nil })

            let counted = try await plan.countingAffectedRows(in: url, logger: testLogger)
            let warnings = counted.steps[0].dataLossWarnings
            let long = Seeded.titles.compactMap { $0 }.filter { $0.count > 10 }.count
            let outside = Seeded.priorities.compactMap { $0 }.filter { $0 < -32_768 || $0 > 32_767 }.count
            let fractional = Seeded.scores.compactMap { $0 }.filter { $0.rounded() != $0 }.count
            #expect(
                Self.lines(warnings).sorted() == [
                    "warning: Folder.notes and its inverse Note.folder are not carried: no relationship mapping of FolderToFolder or of the inverse's entity reads either — \(Seeded.folders.compactMap { $0 }.count) links",
                    "warning: Note.draft is not carried: no property mapping of NoteToNote reads it — \(Seeded.drafts.compactMap { $0 }.count) rows have a value",
                    "warning: Note.priority fills Note.priority in NoteToNote, but values outside -32768…32767 do not fit Integer 16: validation refuses such rows and the step fails, leaving the store as it was — \(outside) rows do not fit",
                    "warning: Note.score fills Note.score in NoteToNote, but Double values with a fraction do not fit Integer 32; values outside -2147483648…2147483647 do not fit Integer 32: validation refuses such rows and the step fails, leaving the store as it was — \(fractional) rows do not fit",
                    "warning: Note.tags is to-many but fills the to-one Note.tags in NoteToNote: objects with several keep one — \(Seeded.tags.filter { $0.count > 1 }.count) rows have more than one",
                    "warning: Note.title fills Note.title in NoteToNote, but title must be …10 characters long: validation refuses such rows and the step fails, leaving the store as it was — \(long) rows do not fit",
                    "warning: the entity Scrap is removed: no entity mapping of the step migrates its rows — \(Seeded.scraps) rows",
                ],
                "\(Self.lines(warnings).sorted().joined(separator: "\n"))"
            )
            // Counting reads only.
            try await expectUnchanged(url, since: before)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aFilteredMappingWithAPolicySaysWhatItLeavesOutAndWhatOnlyThePolicyCanCarry(engine: TestEngine) async throws {
        try await engine.withStoreURL { url in
            try await Self.seed(url)
            let (v1, v2) = (try Self.v1.get(), try Self.v2.get())
            var mapping = try MappingModel.inferred(from: v1, to: v2)
            let index = try #require(mapping.entityMappings.firstIndex { $0.name == "NoteToNote" })
            mapping.entityMappings[index].sourceFilter = try Predicate(format: "priority > 0")
            mapping.entityMappings[index].policyName = "NoteToNotePolicy"
            mapping.entityMappings[index].type = .custom
            mapping.isInferred = false
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: try Self.versions(), mappingModels: [mapping]), logger: testLogger)
            let plan = try await migrator.plan(forStoreAt: url).countingAffectedRows(in: url, logger: testLogger)
            let lines = Self.lines(plan.steps[0].dataLossWarnings)
            // NOT (priority > 0) as the store answers it: zero, negative, or no priority.
            let left = Seeded.priorities.filter { ($0 ?? 0) <= 0 }.count
            #expect(
                lines.contains(
                    "note: NoteToNote migrates only the Note rows matching its source filter 'priority > 0'; the others are dropped (unless its policy NoteToNotePolicy carries it) — \(left) rows do not match"
                ),
                "\(lines)"
            )
            #expect(
                lines.contains(
                    "note: Note.draft is not carried: no property mapping of NoteToNote reads it (unless its policy NoteToNotePolicy carries it) — \(Seeded.drafts.compactMap { $0 }.count) rows have a value"
                ),
                "\(lines)"
            )
            #expect(plan.steps[0].streamingReason?.contains("NoteToNote") == true, "\(String(describing: plan.steps[0].streamingReason))")
        }
    }

    /// A mapping takes the rows of exactly its entity: a parent's does not take a
    /// sub-entity's. A bound that widens leaves nothing out.
    @Test(arguments: TestEngine.allCases)
    func aSubEntityWithoutAMappingOfItsOwnIsRemovedAndAWiderBoundWarnsOfNothing(engine: TestEngine) async throws {
        func shelf(_ name: String, maxLength: Int) throws -> ManagedObjectModel {
            try Self.model(
                name,
                """
                <entity name="Item" syncable="YES"><attribute name="name" optional="YES" maxValueString="\(maxLength)" attributeType="String"/></entity>
                <entity name="Book" parentEntity="Item" syncable="YES"><attribute name="isbn" optional="YES" attributeType="String"/></entity>
                """
            ).get()
        }
        let (v1, v2) = (try shelf("Shelf", maxLength: 20), try shelf("Shelf 2", maxLength: 40))
        var mapping = try MappingModel.inferred(from: v1, to: v2)
        mapping.entityMappings.removeAll { $0.sourceEntityName == "Book" }
        mapping.isInferred = false
        #expect(mapping.entityMappings.map(\.name) == ["ItemToItem"])
        let versions = try VersionedModel(name: "Shelf", versions: [v1, v2], currentVersionName: "Shelf 2")
        try await engine.withStoreURL { url in
            try await makeClosedStore(at: url, model: v1) { container in
                let context = container.newContext()
                for index in 0..<3 { try context.insertObject(entityName: "Item").setValue(.string("item \(index)"), forKey: "name") }
                for index in 0..<2 { try context.insertObject(entityName: "Book").setValue(.string("book \(index)"), forKey: "name") }
                try await context.save()
            }
            let migrator = ProgressiveMigrator(chain: MigrationChain(models: versions, mappingModels: [mapping]), logger: testLogger)
            let plan = try await migrator.plan(forStoreAt: url).countingAffectedRows(in: url, logger: testLogger)
            #expect(
                Self.lines(plan.steps[0].dataLossWarnings) == [
                    "warning: the entity Book is removed: no entity mapping of the step migrates its rows — 2 rows"
                ],
                "\(Self.lines(plan.steps[0].dataLossWarnings))"
            )
        }
    }

    @Test func aStepThatDropsNothingWarnsOfNothing() throws {
        let models = try Self.versions()
        let v1 = try Self.v1.get()
        let same = try VersionedModel(
            name: "Notes",
            versions: [v1, try ManagedObjectModel(xml: v1.xmlData(), name: "Notes 2")],
            currentVersionName: "Notes 2"
        )
        let migrator = ProgressiveMigrator(chain: MigrationChain(models: same), logger: testLogger)
        #expect(try migrator.step(from: v1, to: same.current, dialect: .sqlite).dataLossWarnings.isEmpty)
        #expect(models.versions.count == 2)
    }

    // MARK: The commands

    @Test func validateShowsHowEachStepRunsAndWhatItDrops() async throws {
        let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Notes.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Self.versions().write(to: folder)
        let output = try await persistenceCommand.run(["validate", "--models", folder.path])
        // Warnings are not problems.
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        #expect(output.stdout.contains("step 1: Notes → Notes 2 ("), "\(output.stdout)")
        #expect(
            output.stdout.contains("\n  warning: the entity Scrap is removed: no entity mapping of the step migrates its rows\n"),
            "\(output.stdout)"
        )
        #expect(
            output.stdout.contains("\n  warning: Note.tags is to-many but fills the to-one Note.tags in NoteToNote: objects with several keep one\n")
        )
        #expect(output.stdout.contains("Checked 2 model versions, 0 mapping files: no problems."))

        // A step of two mapping models, the second looking up the first's: sound, and streamed for that.
        let scenario = Scenario.fixtures.appendingPathComponent("CustomMigrations")
        let passes = try await persistenceCommand.run([
            "validate", "--models", scenario.appendingPathComponent("Books.xcdatamodeld").path,
            "--mappings", scenario.appendingPathComponent("PassLookupMappings").path,
        ])
        #expect(passes.status == 0, "\(passes.stdout)\(passes.stderr)")
        #expect(
            passes.stdout.contains(
                "step 2: Books 2 → Books 3 (streamed: mapping Books2To3Part1, mapping Books2To3Part2, policy BookToBookFilePolicy)\n  streamed, because the step has 2 mapping models\n"
            ),
            "\(passes.stdout)"
        )
        #expect(passes.stdout.contains("Checked 3 model versions, 2 mapping files: no problems."), "\(passes.stdout)")
    }

    @Test(arguments: TestEngine.allCases)
    func migratePlanCountsTheRowsTheFirstStepDrops(engine: TestEngine) async throws {
        let folder = try ModelFixtures.temporaryFolder().appendingPathComponent("Notes.xcdatamodeld")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        try Self.versions().write(to: folder)
        try await engine.withStoreURL { url in
            try await Self.seed(url)
            let before = try await StoreSnapshot(url)
            let output = try await persistenceCommand.run(["migrate", "--models", folder.path, "--store", url.description, "--plan"])
            #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
            #expect(
                output.stdout.contains(
                    "\n     warning: the entity Scrap is removed: no entity mapping of the step migrates its rows — \(Seeded.scraps) rows\n"
                ),
                "\(output.stdout)"
            )
            #expect(output.stdout.contains("— 2 rows have more than one\n"))
            try await expectUnchanged(url, since: before)
        }
    }
}
