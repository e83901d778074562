/// Why the tests have no PostgreSQL server, and how to give them one.
public struct TestPostgresError: Error, Sendable, CustomStringConvertible {
    /// What went wrong when a server was sought, in a sentence.
    public var reason: String

    /// An error saying why no server could be had.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The reason, then how to get a server: install PostgreSQL, or point the tests at one.
    public var description: String {
        let reason = self.reason.last.map { ".?!".contains($0) } == true ? self.reason : self.reason + "."
        return """
            PostgreSQL tests need a server, and none could be had: \(reason) \
            Install PostgreSQL (Debian/Ubuntu: `apt-get install postgresql`, or run scripts/setup.sh) so the tests \
            start a throwaway server of their own, or set \(TestPostgres.environmentVariable) to a server whose user \
            may create databases, e.g. postgres://postgres@127.0.0.1:5432/postgres
            """
    }
}
