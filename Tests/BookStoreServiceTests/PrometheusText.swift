/// A scrape of `/metrics` read back: each sample line's name, labels and value (comments
/// and `# TYPE`/`# HELP` lines skipped), as Prometheus' text format 0.0.4 writes them.
struct PrometheusText {
    struct Sample: Equatable {
        let name: String
        let labels: [String: String]
        let value: Double
    }

    let samples: [Sample]
    /// The `# TYPE` lines: each family's type.
    let types: [String: String]

    init(_ text: String) throws {
        var samples: [Sample] = []
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") { continue }
            samples.append(try Self.sample(Substring(line)))
        }
        self.samples = samples
        self.types = types
    }

    /// The value of the one sample of `name` whose labels include `labels`; `nil` when none
    /// has them.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let matching = samples.filter { sample in sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value } }
        return matching.count == 1 ? matching[0].value : nil
    }

    /// Every sample whose name starts with `prefix`.
    func samples(startingWith prefix: String) -> [Sample] {
        samples.filter { $0.name.hasPrefix(prefix) }
    }

    struct Malformed: Error, CustomStringConvertible {
        let line: String
        var description: String { "not a sample line: \(line)" }
    }

    private static func sample(_ line: Substring) throws -> Sample {
        var rest = line
        let name = rest.prefix { $0 != "{" && $0 != " " }
        rest = rest.dropFirst(name.count)
        var labels: [String: String] = [:]
        if rest.first == "{" {
            rest = rest.dropFirst()
            while rest.first != "}" {
                let key = rest.prefix { $0 != "=" }
                rest = rest.dropFirst(key.count)
                guard rest.hasPrefix("=\"") else { throw Malformed(line: String(line)) }
                rest = rest.dropFirst(2)
                var value = ""
                while let character = rest.first, character != "\"" {
                    rest = rest.dropFirst()
                    if character == "\\", let escaped = rest.first {
                        rest = rest.dropFirst()
                        value.append(escaped == "n" ? "\n" : escaped)
                    } else {
                        value.append(character)
                    }
                }
                guard rest.first == "\"" else { throw Malformed(line: String(line)) }
                rest = rest.dropFirst()
                if rest.first == "," { rest = rest.dropFirst() }
                labels[String(key)] = value
                guard !rest.isEmpty else { throw Malformed(line: String(line)) }
            }
            rest = rest.dropFirst()
        }
        guard rest.first == " ", let value = Double(rest.dropFirst().split(separator: " ").first ?? "") else { throw Malformed(line: String(line)) }
        return Sample(name: String(name), labels: labels, value: value)
    }
}
