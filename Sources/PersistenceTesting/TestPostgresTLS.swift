import Dispatch
import Foundation
import Persistence

/// A throwaway PostgreSQL server that takes TLS connections only, as managed servers
/// require, with a certificate authority of its own made for the run (`openssl`): for the
/// tests of `sslmode`, `sslrootcert` and the errors of a certificate that does not match.
///
/// ```swift
/// let tls = try await TestPostgresTLS.shared()
/// let url = try StoreURL("postgres://postgres@localhost:\(tls.port)/postgres?sslmode=verify-full&sslrootcert=\(tls.authorityFile)")
/// ```
public struct TestPostgresTLS: Sendable {
    /// Where the server listens on 127.0.0.1, its certificate issued to `localhost` and
    /// 127.0.0.1.
    public let port: Int
    /// The certificate of the authority that signed the server's.
    public let authorityFile: String
    /// The certificate of another authority, which signed nothing the server has.
    public let otherAuthorityFile: String

    private static let started = Task<Result<TestPostgresTLS, TestPostgresError>, Never> {
        await withCheckedContinuation { continuation in
            DispatchQueue(label: "persistence.testing.postgres-tls.start").async {
                continuation.resume(returning: Result { () throws(TestPostgresError) in try start() })
            }
        }
    }

    /// The server, started on first use and stopped when the process exits.
    public static func shared() async throws -> TestPostgresTLS {
        try await started.value.get()
    }

    private static func start() throws(TestPostgresError) -> TestPostgresTLS {
        var files: (authority: String, other: String)?
        let server = try ThrowawayPostgresServer.start(
            settings: ["ssl=on", "ssl_cert_file=server.crt", "ssl_key_file=server.key"],
            accessRules: """
                # TLS only, over TCP; the server's own tools on its socket.
                local all all trust
                hostssl all all 127.0.0.1/32 trust
                hostnossl all all 0.0.0.0/0 reject

                """
        ) { folder, owner throws(TestPostgresError) in
            files = try makeCertificates(in: folder, serverData: folder + "/data", owner: owner)
        }
        guard let files else { throw TestPostgresError("the TLS server's certificates were not made") }
        return TestPostgresTLS(port: server.port, authorityFile: files.authority, otherAuthorityFile: files.other)
    }

    /// A certificate authority, a server certificate it signs for `localhost` and
    /// 127.0.0.1 (in the server's data folder, its key readable by the server's user only),
    /// and a second authority.
    private static func makeCertificates(
        in folder: String,
        serverData: String,
        owner: (uid: uid_t, gid: gid_t)?
    )
        throws(TestPostgresError) -> (authority: String, other: String)
    {
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1"
        do {
            try names.write(toFile: folder + "/server.ext", atomically: true, encoding: .utf8)
        } catch {
            throw TestPostgresError("cannot write the certificate's names in \(folder): \(error)")
        }
        let commands: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Persistence test CA",
                "-keyout", folder + "/ca.key", "-out", folder + "/ca.crt",
            ],
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Persistence other CA",
                "-keyout", folder + "/other.key", "-out", folder + "/other.crt",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", serverData + "/server.key", "-out",
                folder + "/server.csr",
            ],
            [
                "x509", "-req", "-in", folder + "/server.csr", "-CA", folder + "/ca.crt", "-CAkey", folder + "/ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", folder + "/server.ext", "-out", serverData + "/server.crt",
            ],
        ]
        for arguments in commands {
            let result = ThrowawayPostgresServer.run(["/usr/bin/openssl"] + arguments, asPostgres: false)
            guard result.status == 0 else {
                throw TestPostgresError(
                    "openssl \(arguments.prefix(2).joined(separator: " ")) failed (the TLS tests need the `openssl` package): \(result.output.suffix(1000))"
                )
            }
        }
        // The server refuses a key others may read.
        chmod(serverData + "/server.key", 0o600)
        if let owner {
            for file in ["/server.key", "/server.crt"] { chown(serverData + file, owner.uid, owner.gid) }
        }
        for file in ["/ca.crt", "/other.crt"] { chmod(folder + file, 0o644) }
        return (folder + "/ca.crt", folder + "/other.crt")
    }
}
