import Foundation
import Testing

@testable import Persistence

/// Uniqueness constraints and fetch indexes as Xcode writes them (`<uniquenessConstraints>`,
/// `<fetchIndex>`): read, written back, and checked against the entity's properties.
@Suite("Model: uniqueness constraints and fetch indexes")
struct ModelConstraintTests {
    @Test func theCarsModelsConstraintsAndIndexAreRead() throws {
        let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel2"))
        let car = try #require(model.entity(named: "Car"))
        #expect(car.uniquenessConstraints == [["numberPlate"]])
        #expect(
            car.fetchIndexes == [
                FetchIndex(
                    name: "byMakerAndNumberPlate",
                    elements: [
                        FetchIndex.Element(property: "maker"), FetchIndex.Element(property: "numberPlate"),
                    ]
                )
            ]
        )
        #expect(model.entity(named: "Person")?.uniquenessConstraints == [["firstName", "lastName"]])
        #expect(model.entity(named: "SportCar")?.uniquenessConstraints == [])
    }

    @Test func theyAreWrittenBackAsXcodeWritesThem() throws {
        let model = try #require(try CarsFixtures.versionedModel().version(named: "SampleModel2"))
        let written = model.xmlString()
        #expect(
            written.contains(
                """
                        <fetchIndex name="byMakerAndNumberPlate">
                            <fetchIndexElement property="maker" type="Binary" order="ascending"/>
                            <fetchIndexElement property="numberPlate" type="Binary" order="ascending"/>
                        </fetchIndex>
                        <uniquenessConstraints>
                            <uniquenessConstraint>
                                <constraint value="numberPlate"/>
                            </uniquenessConstraint>
                        </uniquenessConstraints>
                """
            ),
            "\(written)"
        )
        let again = try ManagedObjectModel(xml: Data(written.utf8), name: model.name)
        #expect(again.entities == model.entities)
    }

    /// An index with an element on an expression is not carried whole, so not at all: the
    /// property elements alone would make another index.
    @Test func aFetchIndexWithAnExpressionElementIsNotCarried() throws {
        let model = try ModelFixtures.model(
            """
            <entity name="Car">
                <attribute name="maker" optional="YES" attributeType="String"/>
                <fetchIndex name="byMakerAndLength">
                    <fetchIndexElement property="maker" type="Binary" order="ascending"/>
                    <fetchIndexElement expression="length:(maker)" expressionType="Integer 64" type="Binary" order="ascending"/>
                </fetchIndex>
                <fetchIndex name="byMaker"><fetchIndexElement property="maker" type="Binary" order="descending"/></fetchIndex>
            </entity>
            """
        )
        #expect(
            model.entity(named: "Car")?.fetchIndexes == [
                FetchIndex(name: "byMaker", elements: [FetchIndex.Element(property: "maker", isAscending: false)])
            ]
        )
    }

    @Test func aConstraintOrIndexOnAPropertyTheEntityLacksIsRefusedNamingIt() throws {
        let constraint = ModelFixtures.error(
            """
            <entity name="Car">
                <attribute name="plate" optional="YES" attributeType="String"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="numberPlate"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            """
        )
        #expect(constraint?.code == .missingProperty)
        #expect(
            constraint?.message.contains("'numberPlate'") == true && constraint?.message.contains("'Car'") == true,
            "\(String(describing: constraint))"
        )
        let index = ModelFixtures.error(
            """
            <entity name="Car">
                <relationship name="owners" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Car"/>
                <fetchIndex name="byOwners"><fetchIndexElement property="owners" type="Binary" order="ascending"/></fetchIndex>
            </entity>
            """
        )
        #expect(index?.code == .missingProperty)
        #expect(index?.message.contains("fetch index 'byOwners'") == true, "\(String(describing: index))")
    }
}
