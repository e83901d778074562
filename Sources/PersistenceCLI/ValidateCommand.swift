import ArgumentParser
import CommandLineSupport
import Foundation
import Persistence

struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Load and check every model version and mapping file; report every problem with its file and line.",
        discussion: """
            Checks each .xcdatamodel, the version lock beside the model (NAME.versionlock.json, see `persistence lock`): every locked version as it was locked, .xccurrentversion (none is needed for a single version), each mapping model (*.json, *.xcmappingmodel) against the two versions it \
            names (key paths, types, look-ups, filters), and that every step between consecutive versions has a \
            mapping file or can be inferred. Exits non-zero when there is any problem; warnings (what Core Data loads \
            but Xcode warns of, with file and line) do not fail it. Touches no store.
            """
    )

    @OptionGroup var options: CommonOptions

    @Option(name: .long, help: ArgumentHelp("The model's .xcdatamodeld folder.", valueName: "path"))
    var models: String

    @Option(name: .long, help: ArgumentHelp("The folder of mapping models: *.json files and Xcode's *.xcmappingmodel folders.", valueName: "dir"))
    var mappings: String?

    func run() async throws {
        try await runReportingErrors {
            let folder = URL(fileURLWithPath: models)
            var problems: [String] = []
            // What Core Data loads but Xcode warns of: said, but no reason to fail.
            var warnings: [String] = []
            // Each version on its own, so one broken version does not hide another's problems.
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".xcdatamodel") }.sorted()
            var loaded = 0
            for name in names {
                do {
                    let model = try ManagedObjectModel(contentsOf: folder.appendingPathComponent(name))
                    warnings.append(contentsOf: model.warnings.map { "\($0)" })
                    loaded += 1
                } catch {
                    problems.append("\(error)")
                }
            }
            var versions: VersionedModel?
            var lockSummary = ""
            if problems.isEmpty {
                do {
                    versions = try VersionedModel(contentsOf: folder)
                } catch {
                    problems.append("\(error)")
                }
                if let versions, versions.lock != nil {
                    let lockFile = ModelVersionLock.fileURL(forModelAt: folder).path
                    problems.append(
                        contentsOf: versions.lockChanges.map {
                            "\(lockFile): \($0). Restore the version as it shipped and make the change in a new model version; lock that when it ships"
                        }
                    )
                    if versions.lockChanges.isEmpty { lockSummary = ", \(versions.lock!.versions.count) locked version(s) unchanged" }
                }
            }
            var mappingFiles: [URL] = []
            if let mappings {
                let directory = URL(fileURLWithPath: mappings)
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue {
                    mappingFiles = MappingModel.mappingFileNames((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
                        .map { directory.appendingPathComponent($0) }
                } else {
                    problems.append(
                        "\(mappings): there is no folder of mapping files here. Name the folder that holds the mapping models (*.json, *.xcmappingmodel)"
                    )
                }
            }
            var policies: [String] = []
            var steps: [(number: Int, step: MigrationPlan.Step)] = []
            if let versions {
                // Read as one set: a step's mapping models may look up each other's entity mappings.
                let (mappingModels, found) = MappingModel.read(filesAt: mappingFiles, versions: versions)
                problems.append(contentsOf: found.map { "\($0)" })
                for mapping in mappingModels {
                    policies.append(
                        contentsOf: mapping.policyNames.map {
                            "\(mapping.file ?? mapping.name) names the policy '\($0)': the step needs the app that registers it"
                        }
                    )
                    policies.append(contentsOf: mapping.notes.map { "\(mapping.file ?? mapping.name): \($0)" })
                }
                // Each step `persistence migrate` runs from a store of each version to the
                // current one, as a SQLite store would run it: how, and what it drops. Shown
                // only when every mapping file loaded: without one, its step would seem inferred.
                let chain = MigrationChain(models: versions, mappingModels: mappingModels)
                let migrator = ProgressiveMigrator(chain: chain, logger: options.makeLogger())
                var pairs: [(ManagedObjectModel, ManagedObjectModel)] = []
                for version in versions.versions where version.name != versions.current.name {
                    let path = [version] + chain.straightPath(from: version, to: versions.current).versions
                    for (source, destination) in zip(path, path.dropFirst())
                    where !pairs.contains(where: { $0.0.name == source.name && $0.1.name == destination.name }) {
                        pairs.append((source, destination))
                    }
                }
                for (index, (source, destination)) in pairs.enumerated() {
                    do {
                        let step = try migrator.step(from: source, to: destination, dialect: .sqlite)
                        if found.isEmpty { steps.append((index + 1, step)) }
                    } catch let error as MigrationError
                        where error.code == .invalidMappingModel && mappingModels.filter({ $0.maps(from: source, to: destination) }).count > 1
                    {
                        // The files' order is this command's (by name); an app may name another (mappingModelNames).
                        policies.append("step \(source.name) → \(destination.name) in file-name order, as `persistence migrate` runs it: \(error)")
                    } catch {
                        problems.append("\(folder.lastPathComponent): step \(source.name) → \(destination.name): \(error)")
                    }
                }
            } else if !mappingFiles.isEmpty {
                problems.append("\(mappingFiles.count) mapping file(s) not checked: they need every model version to load")
            }
            for (number, step) in steps {
                print("step \(number): \(step)")
                step.printDetails(indent: "  ")
            }
            for warning in warnings { print("warning: \(warning)") }
            for problem in problems { print("error: \(problem)") }
            for note in policies { print("note: \(note)") }
            let summary =
                "\(names.count) model version\(names.count == 1 ? "" : "s"), \(mappingFiles.count) mapping file\(mappingFiles.count == 1 ? "" : "s")\(lockSummary)"
            if problems.isEmpty {
                print("Checked \(summary): no problems.")
            } else {
                print("Checked \(summary): \(problems.count) problem\(problems.count == 1 ? "" : "s").")
                throw ExitCode.failure
            }
        }
    }
}
