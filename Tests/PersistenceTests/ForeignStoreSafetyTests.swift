import Foundation
import Testing

@testable import Persistence

/// What keeps a store of Apple's Core Data, and of ours, from being changed wrongly:
/// external binary storage kept in the model (read in ``AppleLayoutFeatureTests``), Apple's
/// keys dropped from foreign stores only, and
/// decimals stored as REAL (as Core Data writes them) read back as the value written.
@Suite("Foreign stores: safety")
struct ForeignStoreSafetyTests {
    static let attachmentModel = """
        <entity name="Attachment" representedClassName="Attachment" syncable="YES">
            <attribute name="data" optional="YES" attributeType="Binary" allowsExternalBinaryDataStorage="YES"/>
            <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        """

    @Test func externalBinaryStorageIsReadAndWrittenBack() throws {
        let model = try ModelFixtures.model(Self.attachmentModel)
        let data = try #require(model.entity(named: "Attachment")?.attributes.first { $0.name == "data" })
        #expect(data.allowsExternalBinaryDataStorage)
        #expect(model.entity(named: "Attachment")?.attributes.first { $0.name == "title" }?.allowsExternalBinaryDataStorage == false)
        let written = model.xmlString()
        #expect(written.contains(#"attributeType="Binary" allowsExternalBinaryDataStorage="YES""#))
    }

    @Test func appleKeysAreDroppedFromForeignStoresOnlyWhenMigrated() throws {
        let model = try ModelFixtures.model(Self.attachmentModel)
        let apple = StoreMetadata(
            versionHashes: ["Attachment": Data(count: 32)],
            storeType: "SQLite",
            additional: ["NSPersistenceFrameworkVersion": .integer(847), "_NSAutoVacuumLevel": .string("2"), "AppKey": .string("kept")]
        )
        let fromApple = apple.migrated(to: model, storeType: "SQLite")
        #expect(fromApple.additional["NSPersistenceFrameworkVersion"] == nil && fromApple.additional["_NSAutoVacuumLevel"] == nil)
        #expect(fromApple.additional["AppKey"] == .string("kept"))
        #expect(fromApple.storeUUID == apple.storeUUID)

        var ours = StoreMetadata(model: model, storeType: "SQLite")
        ours.additional["NSCustomSyncToken"] = .string("an app's own")
        #expect(ours.migrated(to: model, storeType: "SQLite").additional["NSCustomSyncToken"] == .string("an app's own"))
    }

    @Test func aDecimalStoredAsRealReadsAsTheValueWritten() throws {
        #expect(ValueCoding.attributeValue(.double(0.1), type: .decimal) == .decimal(Decimal(string: "0.1")!))
        #expect(ValueCoding.attributeValue(.double(19.99), type: .decimal) == .decimal(Decimal(string: "19.99")!))
        #expect(ValueCoding.attributeValue(.text("0.1"), type: .decimal) == .decimal(Decimal(string: "0.1")!))
    }
}
