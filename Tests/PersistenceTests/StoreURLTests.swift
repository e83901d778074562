import Foundation
import Testing

@testable import Persistence

/// Store URLs, above all PostgreSQL's as libpq reads them, and that no description shows a password.
@Suite("Store URLs")
struct StoreURLTests {
    func postgres(_ string: String) throws -> PostgresConfiguration {
        guard case .postgres(let configuration) = try StoreURL(string).kind else {
            Issue.record("\(string) is not a PostgreSQL URL")
            return PostgresConfiguration()
        }
        return configuration
    }

    @Test func tcpURL() throws {
        let c = try postgres("postgres://shop:s3cret@db.internal:5433/bookstore")
        #expect(c.host == "db.internal" && c.port == 5433)
        #expect(c.user == "shop" && c.password == "s3cret")
        #expect(c.database == "bookstore")
        #expect(c.schema == "public")
        #expect(c.connectTimeout == 10)
        #expect(!c.usesUnixSocket)
        #expect(c.serverDescription == "db.internal:5433")
    }

    @Test func unixSocketURLs() throws {
        let query = try postgres("postgres://shop@/bookstore?host=/var/run/postgresql")
        #expect(query.host == "/var/run/postgresql" && query.usesUnixSocket)
        #expect(query.user == "shop" && query.database == "bookstore" && query.port == nil)
        #expect(query.serverDescription == "socket /var/run/postgresql (port 5432)")
        let encoded = try postgres("postgresql://%2Fvar%2Frun%2Fpostgresql:5433/bookstore")
        #expect(encoded.host == "/var/run/postgresql" && encoded.port == 5433)
        let bare = try postgres("postgres:///bookstore")
        #expect(bare.host == nil && bare.database == "bookstore" && bare.usesUnixSocket)
    }

    @Test func queryParameters() throws {
        let c = try postgres("postgres://u@h/db?schema=shop&connect_timeout=3&sslmode=require&application_name=bookstore")
        #expect(c.schema == "shop")
        #expect(c.connectTimeout == 3)
        #expect(c.parameters == ["sslmode": "require", "application_name": "bookstore"])
        let ipv6 = try postgres("postgres://u@[::1]:5434/db")
        #expect(ipv6.host == "::1" && ipv6.port == 5434)
        #expect(ipv6.serverDescription == "[::1]:5434")
        let escaped = try postgres("postgres://us%40er:p%3Ass@h/d%20b")
        #expect(escaped.user == "us@er" && escaped.password == "p:ss" && escaped.database == "d b")
    }

    @Test func descriptionsNeverShowThePassword() throws {
        let urls = [
            "postgres://shop:s3cret@db.internal:5433/bookstore": "postgres://shop@db.internal:5433/bookstore",
            "postgres://shop:s3cret@/bookstore?host=/var/run/postgresql&schema=shop":
                "postgres://shop@/bookstore?host=/var/run/postgresql&schema=shop",
            "postgres://shop@h/db?password=s3cret&sslpassword=s3cret&sslmode=require": "postgres://shop@h/db?sslmode=require",
        ]
        for (url, expected) in urls {
            let storeURL = try StoreURL(url)
            #expect(storeURL.description == expected)
            #expect(!storeURL.description.contains("s3cret"))
            #expect(!String(reflecting: storeURL).contains("s3cret"))
            var dumped = ""
            dump(storeURL, to: &dumped)
            #expect(!dumped.contains("s3cret"), "\(dumped)")
        }
    }

    @Test func invalidURLsAreRefusedWithoutEchoingThem() throws {
        for url in [
            "postgres://shop:s3cret@h:99999/db", "postgres://shop:s3cret@h/db?connect_timeout=soon", "postgres://shop:s3cret@[::1/db",
            "postgres://shop:s3cret@h/db?schema=",
        ] {
            let error = #expect(throws: StoreError.self) { try StoreURL(url) }
            #expect(error?.code == .invalidURL)
            #expect(error.map { !"\($0)".contains("s3cret") } == true, "\(String(describing: error))")
        }
    }

    @Test func otherKinds() throws {
        #expect(try StoreURL("sqlite:///tmp/a.sqlite").kind == .sqlite(path: "/tmp/a.sqlite"))
        #expect(try StoreURL("memory:").kind == .memory(name: ""))
        #expect(try StoreURL("postgres://h/db").storeType == "PostgreSQL")
    }

    /// What a caller asks of a URL instead of switching on its kind: the scheme it was
    /// written with, and whether its engine migrates online.
    @Test func schemesAndOnlineMigrations() throws {
        let urls = try ["sqlite:///tmp/a.sqlite", "postgres://h/db?schema=shop", "postgresql://h/db", "memory:"].map(StoreURL.init)
        #expect(urls.map(\.scheme) == ["sqlite", "postgres", "postgres", "memory"])
        #expect(urls.map(\.migratesOnline) == [false, true, true, false])
        #expect(urls.map(\.filePath) == ["/tmp/a.sqlite", nil, nil, nil])
    }

    /// `sqlite://data/books.sqlite` (two slashes) names a host, `data`, in any URL reader's
    /// eyes: the one who wrote it meant `/data/books.sqlite` or `./data/books.sqlite`, and is
    /// told so rather than given a store somewhere else.
    @Test func aSQLiteURLWithTwoSlashesBeforeANameIsRefusedWithBothReadings() throws {
        for url in ["sqlite://data/books.sqlite", "sqlite://books.sqlite"] {
            let error = #expect(throws: StoreError.self) { try StoreURL(url) }
            #expect(error?.code == .invalidURL)
            let path = String(url.dropFirst("sqlite://".count))
            let hint = error?.hint ?? ""
            #expect(hint.contains("sqlite:///\(path)") && hint.contains("sqlite://./\(path)"), "\(String(describing: error))")
        }
        #expect(try StoreURL("sqlite://./data/books.sqlite").kind == .sqlite(path: "./data/books.sqlite"))
        #expect(try StoreURL("sqlite://../books.sqlite").kind == .sqlite(path: "../books.sqlite"))
        #expect(try StoreURL("sqlite:///data/books.sqlite").kind == .sqlite(path: "/data/books.sqlite"))
        #expect(try StoreURL("data/books.sqlite").kind == .sqlite(path: "data/books.sqlite"))
    }

    @Test func refusedURLsNeverEchoTheirPassword() {
        for url in ["postgres://shop:50%off@db/bookstore", "postgress://shop:s3cret@db/bookstore", "mysql://shop:s3cret@db/bookstore"] {
            let error = #expect(throws: StoreError.self) { try StoreURL(url) }
            let text = "\(error.map { "\($0)" } ?? "")"
            #expect(!text.contains("50%off") && !text.contains("s3cret"), "\(text)")
            #expect(error?.code == .invalidURL)
        }
        #expect((try? StoreURL("")) == nil)
    }
}
