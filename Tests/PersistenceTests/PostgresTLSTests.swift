import Foundation
import PersistenceTesting
import Testing

@testable import Persistence

/// A store on a server that takes TLS connections only (``TestPostgresTLS``), as managed
/// servers require: libpq's `sslmode`, `sslrootcert` and friends pass through the store URL.
@Suite("PostgreSQL over TLS")
struct PostgresTLSTests {
    static let notes = """
        <entity name="Note" representedClassName="Note">
            <attribute name="title" optional="YES" attributeType="String"/>
        </entity>
        """

    /// The URL of a schema of its own on the TLS server, with `parameters`.
    static func url(_ tls: TestPostgresTLS, host: String = "localhost", schema: String, _ parameters: String) throws -> StoreURL {
        try StoreURL("postgres://postgres@\(host):\(tls.port)/postgres?schema=\(schema)&connect_timeout=5&\(parameters)")
    }

    /// `sslmode=verify-full` with the authority that signed the server's certificate: the
    /// store is created, written and read over an encrypted session.
    @Test func verifyFullWithTheRightAuthorityOpensTheStore() async throws {
        let tls = try await TestPostgresTLS.shared()
        let schema = "tls_" + UUID().uuidString.prefix(8).lowercased()
        let url = try Self.url(tls, schema: schema, "sslmode=verify-full&sslrootcert=\(tls.authorityFile)")
        guard case .postgres(let configuration) = url.kind else { return }
        let connection = try PostgresConnection(configuration: configuration)
        try connection.execute(rawSQL: "CREATE SCHEMA \(schema)")
        #expect(try connection.scalar(rawSQL: "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", []) == .integer(1))
        let model = try ModelFixtures.model(Self.notes)
        let container = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
        let context = container.newContext()
        try context.insertObject(entityName: "Note").setValue(.string("Zürich über TLS"), forKey: "title")
        try await context.save()
        let titles = try await container.newContext().fetch(FetchRequest(entityName: "Note")).map { $0.value(forKey: "title") }
        #expect(titles == [.string("Zürich über TLS")])
        await container.store.close()
        try connection.execute(rawSQL: "DROP SCHEMA \(schema) CASCADE")
    }

    /// A certificate signed by another authority, a host name the certificate was not
    /// issued for, and a session without TLS are refused, each saying it is TLS and what
    /// decides it; nothing is written.
    @Test func aCertificateThatDoesNotMatchIsRefusedNamingTLS() async throws {
        let tls = try await TestPostgresTLS.shared()
        let model = try ModelFixtures.model(Self.notes)
        let refusals: [(parameters: String, host: String, says: String)] = [
            (
                "sslmode=verify-full&sslrootcert=\(tls.otherAuthorityFile)", "localhost",
                "the server's certificate was not accepted under sslmode=verify-full"
            ),
            // Reached at 127.0.0.1 under a name the certificate was not issued for.
            ("sslmode=verify-full&sslrootcert=\(tls.authorityFile)&hostaddr=127.0.0.1", "db.wrong.example", "check that sslrootcert names the CA"),
            ("sslmode=disable", "localhost", "the server accepts only encrypted connections"),
        ]
        for refusal in refusals {
            let url = try Self.url(tls, host: refusal.host, schema: "public", refusal.parameters)
            let error = await #expect(throws: (any Error).self) {
                _ = try await PersistentContainer.open(model: model, store: url, options: .createIfMissing, logger: testLogger)
            }
            let message = "\(String(describing: error))"
            #expect(message.contains(refusal.says), "\(refusal.parameters) @ \(refusal.host): \(message)")
        }
    }
}
