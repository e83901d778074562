/// A progress report as JSON: what a service's health check, its 503 bodies and its status
/// page show, and what a client reads back.
///
/// ```json
/// {"step": 3, "stepCount": 4, "sourceVersion": "BookStore 3", "destinationVersion": "BookStore 4",
///  "stage": "create instances", "entityMapping": "PublicationToPublication", "entity": null,
///  "instancesDone": 2000, "instancesTotal": 4000, "percent": 31, "fractionCompleted": 0.3125,
///  "stepFractionCompleted": 0.25, "elapsedSeconds": 12, "estimatedSecondsRemaining": 26}
/// ```
///
/// The subject is `entityMapping` (stages 1 and 2) or `entity` (stage 3), the other `null`;
/// times are whole seconds, `estimatedSecondsRemaining` `null` until there is a rate to go
/// by. `percent` is written for readers and ignored when read.
extension MigrationProgress: Codable {
    enum CodingKeys: String, CodingKey {
        case step, stepCount, sourceVersion, destinationVersion, stage, entityMapping, entity, instancesDone, instancesTotal
        case percent, fractionCompleted, stepFractionCompleted, elapsedSeconds, estimatedSecondsRemaining
    }

    /// Writes the report as the JSON above, `percent` included and the absent subject as `null`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(step, forKey: .step)
        try container.encode(stepCount, forKey: .stepCount)
        try container.encode(sourceVersion, forKey: .sourceVersion)
        try container.encode(destinationVersion, forKey: .destinationVersion)
        try container.encode(stage, forKey: .stage)
        // Both members are always there, one of them null: clients test them without a missing-key case.
        switch subject {
        case .entityMapping(let name)?:
            try container.encode(name, forKey: .entityMapping)
            try container.encodeNil(forKey: .entity)
        case .entity(let name)?:
            try container.encodeNil(forKey: .entityMapping)
            try container.encode(name, forKey: .entity)
        case nil:
            try container.encodeNil(forKey: .entityMapping)
            try container.encodeNil(forKey: .entity)
        }
        try container.encode(instancesDone, forKey: .instancesDone)
        try container.encode(instancesTotal, forKey: .instancesTotal)
        try container.encode(percent, forKey: .percent)
        try container.encode(fractionCompleted, forKey: .fractionCompleted)
        try container.encode(stepFractionCompleted, forKey: .stepFractionCompleted)
        try container.encode(elapsed.components.seconds, forKey: .elapsedSeconds)
        if let estimatedTimeRemaining {
            try container.encode(estimatedTimeRemaining.components.seconds, forKey: .estimatedSecondsRemaining)
        } else {
            try container.encodeNil(forKey: .estimatedSecondsRemaining)
        }
    }

    /// Reads a report written by `encode(to:)`; `percent` is ignored, and a missing subject or estimate reads as `nil`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let subject: Subject? =
            if let name = try container.decodeIfPresent(String.self, forKey: .entityMapping) {
                .entityMapping(name)
            } else if let name = try container.decodeIfPresent(String.self, forKey: .entity) {
                .entity(name)
            } else {
                nil
            }
        let fraction = try container.decode(Double.self, forKey: .fractionCompleted)
        self.init(
            fractionCompleted: fraction,
            stepFractionCompleted: try container.decodeIfPresent(Double.self, forKey: .stepFractionCompleted) ?? fraction,
            step: try container.decode(Int.self, forKey: .step),
            stepCount: try container.decode(Int.self, forKey: .stepCount),
            sourceVersion: try container.decode(String.self, forKey: .sourceVersion),
            destinationVersion: try container.decode(String.self, forKey: .destinationVersion),
            stage: try container.decode(Stage.self, forKey: .stage),
            subject: subject,
            instancesDone: try container.decode(Int.self, forKey: .instancesDone),
            instancesTotal: try container.decode(Int.self, forKey: .instancesTotal),
            elapsed: .seconds(try container.decode(Int64.self, forKey: .elapsedSeconds)),
            estimatedTimeRemaining: try container.decodeIfPresent(Int64.self, forKey: .estimatedSecondsRemaining).map { .seconds($0) }
        )
    }
}
