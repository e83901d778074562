import Foundation

/// Where a PostgreSQL store lives: server, credentials, database and schema, parsed from a
/// `postgres://` URL the way libpq reads connection URIs.
///
/// ```swift
/// let tcp = try PostgresConfiguration(url: "postgres://bookstore:secret@db.internal:5432/bookstore?schema=shop")
/// tcp.host     // "db.internal"
/// tcp.schema   // "shop"
/// let socket = try PostgresConfiguration(url: "postgres://bookstore@/bookstore?host=/var/run/postgresql")
/// socket.host  // "/var/run/postgresql": a host starting with `/` is a Unix-socket folder
/// ```
///
/// Query parameters: `schema` (the store's tables live there; default `public`), `host`,
/// `port`, `user`, `password`, `dbname`, `connect_timeout` (seconds, default 10),
/// `bulk_insert` (`automatic`, `copy` or `parameters`: see ``BulkInsertMethod``),
/// `pool_mode` (`session`, `transaction`: see ``PoolMode``; found out when not given), and
/// any other libpq connection parameter (`sslmode`, `sslrootcert`, `application_name`, …),
/// passed on as is.
/// ``description`` never shows the password.
public struct PostgresConfiguration: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A host name or address, or a folder holding the server's Unix socket when it starts
    /// with `/`; `nil` is libpq's default (the local socket).
    public var host: String?
    /// `nil` is libpq's default, 5432.
    public var port: Int?
    /// `nil` is libpq's default: the operating system's user name.
    public var user: String?
    /// `nil` for none (or libpq's password file); never shown by ``PostgresConfiguration/description``.
    public var password: String?
    /// `nil` is libpq's default: the user name.
    public var database: String?
    /// The schema holding the store's tables.
    public var schema: String
    /// How long to wait for a connection before giving up, in seconds.
    public var connectTimeout: Int
    /// How batches of rows are written: `COPY` or multi-row `INSERT`s.
    public var bulkInsert: BulkInsertMethod
    /// How a pooler in front of the server hands out sessions; `nil`: found out on connecting.
    public var poolMode: PoolMode?
    /// Other libpq connection parameters, such as `sslmode`.
    public var parameters: [String: String]

    /// How a batch of rows (a migration's batch save, a bulk seed) reaches the server.
    ///
    /// `COPY … FROM STDIN` is the fastest, but some connection poolers and proxies do not
    /// pass it on; multi-row `INSERT`s with bound arguments work everywhere. Either way each
    /// value is stored exactly: a value whose text a column would read differently from its
    /// binary form (a double between two floats, for a `real` column) goes as a bound
    /// argument whatever the method.
    ///
    /// ```swift
    /// let configuration = try PostgresConfiguration(url: "postgres://shop@db/shop?bulk_insert=parameters")
    /// configuration.bulkInsert  // .parameters
    /// ```
    public enum BulkInsertMethod: String, Sendable, Hashable, CaseIterable {
        /// `COPY` for batches of `PostgresConnection.copyThreshold` rows or more, bound
        /// arguments for smaller ones (one round trip, where `COPY` takes two).
        case automatic
        /// `COPY` for every batch whose values it carries exactly, whatever its size.
        case copy
        /// Multi-row `INSERT`s with bound arguments only.
        case parameters
    }

    /// `public`, the schema a store uses unless `schema` says otherwise.
    public static let defaultSchema = "public"
    /// 10 seconds, how long a connection is waited for unless `connect_timeout` says otherwise.
    public static let defaultConnectTimeout = 10

    /// A configuration from its parts, libpq's defaults where `nil`.
    public init(
        host: String? = nil,
        port: Int? = nil,
        user: String? = nil,
        password: String? = nil,
        database: String? = nil,
        schema: String = PostgresConfiguration.defaultSchema,
        connectTimeout: Int = PostgresConfiguration.defaultConnectTimeout,
        bulkInsert: BulkInsertMethod = .automatic,
        poolMode: PoolMode? = nil,
        parameters: [String: String] = [:]
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.schema = schema
        self.connectTimeout = connectTimeout
        self.bulkInsert = bulkInsert
        self.poolMode = poolMode
        self.parameters = parameters
    }

    /// Parses `postgres://[user[:password]@][host][:port][/database][?name=value&…]`
    /// (`postgresql://` too).
    public init(url: String) throws(StoreError) {
        let scheme = ["postgres://", "postgresql://"].first { url.hasPrefix($0) }
        guard let scheme else {
            throw Self.invalid(url, "it does not start with postgres:// or postgresql://")
        }
        self.init()
        var rest = Substring(url.dropFirst(scheme.count))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var authority = rest
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty { database = try Self.decode(path, in: url) }
        }
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                user = try Self.decode(userInfo[..<colon], in: url)
                let secret = userInfo[userInfo.index(after: colon)...]
                guard let decoded = String(secret).removingPercentEncoding else {
                    // Said without the text: it is the password.
                    throw Self.invalid(url, "the password is not valid percent-encoding (write % as %25)")
                }
                password = decoded
            } else if !userInfo.isEmpty {
                user = try Self.decode(userInfo, in: url)
            }
        }
        try parseHostAndPort(authority, in: url)
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try Self.decode(parts[0], in: url)
            let value = parts.count > 1 ? try Self.decode(parts[1], in: url) : ""
            try set(name, value, in: url)
        }
        guard !schema.isEmpty, schema.utf8.count <= 63 else {
            throw Self.invalid(url, "the schema name must have 1 to 63 bytes")
        }
    }

    /// `host`, `host:port`, `[v6]:port`, or empty (the local socket).
    private mutating func parseHostAndPort(_ authority: Substring, in url: String) throws(StoreError) {
        var hostPart = authority
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw Self.invalid(url, "an IPv6 address lacks its closing ]") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") { portPart = after.dropFirst() }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        if !hostPart.isEmpty { host = try Self.decode(hostPart, in: url) }
        if let portPart, !portPart.isEmpty { try set("port", String(portPart), in: url) }
    }

    private mutating func set(_ name: String, _ value: String, in url: String) throws(StoreError) {
        switch name {
        case "schema": schema = value
        case "host": host = value.isEmpty ? nil : value
        case "port":
            guard let number = Int(value), (1...65535).contains(number) else {
                throw Self.invalid(url, "the port '\(value)' is not a number from 1 to 65535")
            }
            port = number
        case "user": user = value
        case "password": password = value
        case "dbname": database = value
        case "connect_timeout":
            guard let seconds = Int(value), seconds > 0 else { throw Self.invalid(url, "connect_timeout must be a positive number of seconds") }
            connectTimeout = seconds
        case "bulk_insert":
            guard let method = BulkInsertMethod(rawValue: value) else {
                throw Self.invalid(
                    url,
                    "bulk_insert must be one of \(BulkInsertMethod.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'"
                )
            }
            bulkInsert = method
        case "pool_mode":
            guard let mode = PoolMode(rawValue: value) else {
                throw Self.invalid(url, "pool_mode must be one of \(PoolMode.allCases.map(\.rawValue).joined(separator: ", ")), got '\(value)'")
            }
            guard mode != .statement else {
                throw StoreError(
                    .invalidURL,
                    "the PostgreSQL store URL names pool_mode=statement: \(Self.statementPoolingRefusal.reason)",
                    hint: Self.statementPoolingRefusal.hint
                )
            }
            poolMode = mode
        default: parameters[name] = value
        }
    }

    private static func decode(_ text: Substring, in url: String) throws(StoreError) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw invalid(url, "'\(text)' is not valid percent-encoding")
        }
        return decoded
    }

    private static func invalid(_ url: String, _ reason: String) -> StoreError {
        // The URL may hold a password: name the problem, never echo the URL.
        StoreError(
            .invalidURL,
            "the PostgreSQL store URL is not valid: \(reason)",
            hint: "write postgres://user:password@host:port/database, or postgres://user@/database?host=/socket/folder, optionally with ?schema=NAME"
        )
    }

    /// Whether ``host`` names a Unix-socket folder rather than a network host.
    public var usesUnixSocket: Bool { host.map { $0.hasPrefix("/") } ?? true }

    /// Where the server is, for messages: `db.internal:5432` or `socket /var/run/postgresql (port 5432)`.
    public var serverDescription: String {
        let port = self.port ?? 5432
        switch host {
        case .some(let host) where host.hasPrefix("/"): return "socket \(host) (port \(port))"
        case .some(let host): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .none: return "the local socket (port \(port))"
        }
    }

    /// The database name libpq connects to: the one given, else the user name.
    public var databaseDescription: String {
        database ?? user ?? "(the user's default)"
    }

    /// The URL again, without the password.
    public var description: String {
        let allowed = CharacterSet.urlUserAllowed.subtracting(CharacterSet(charactersIn: ":@/?#"))
        let queryAllowed = CharacterSet.urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+#"))
        func encode(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text }
        func encodeQuery(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? text }
        var text = "postgres://"
        if let user { text += encode(user) + "@" }
        var query: [(String, String)] = []
        if let host {
            if host.hasPrefix("/") { query.append(("host", host)) } else { text += host.contains(":") ? "[\(host)]" : encode(host) }
        }
        if let port { text += ":\(port)" }
        text += "/" + (database.map(encode) ?? "")
        if schema != Self.defaultSchema { query.append(("schema", schema)) }
        if connectTimeout != Self.defaultConnectTimeout { query.append(("connect_timeout", String(connectTimeout))) }
        if bulkInsert != .automatic { query.append(("bulk_insert", bulkInsert.rawValue)) }
        if let poolMode { query.append(("pool_mode", poolMode.rawValue)) }
        // `sslpassword` and the like are secrets too.
        query += parameters.filter { !$0.key.contains("password") }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        if !query.isEmpty { text += "?" + query.map { "\(encodeQuery($0.0))=\(encodeQuery($0.1))" }.joined(separator: "&") }
        return text
    }

    /// `debugPrint`, string interpolation in test failures and `dump` show no password either.
    public var debugDescription: String { description }

    /// The fields for `dump` and the debugger, the password and other parameters' values shown as `***`.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "host": host as Any, "port": port as Any, "user": user as Any, "password": password.map { _ in "***" } as Any,
                "database": database as Any, "schema": schema, "connectTimeout": connectTimeout, "bulkInsert": bulkInsert,
                "poolMode": poolMode as Any,
                "parameters": parameters.mapValues { _ in "***" }.merging(parameters.filter { !$0.key.contains("password") }) { $1 },
            ],
            displayStyle: .struct
        )
    }

    /// The libpq keywords and values to connect with.
    var connectionParameters: [(String, String)] {
        var result: [(String, String)] = []
        if let host { result.append(("host", host)) }
        if let port { result.append(("port", String(port))) }
        if let user { result.append(("user", user)) }
        if let password { result.append(("password", password)) }
        if let database { result.append(("dbname", database)) }
        result.append(("connect_timeout", String(connectTimeout)))
        result.append(("client_encoding", "UTF8"))
        result += parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return result
    }

    /// The schema as a quoted SQL identifier.
    public var quotedSchema: String { schema.quotedIdentifier }

    /// A table (or function) named in its schema, both quoted: `"public"."zpublication"`.
    public static func qualifiedName(_ table: String, inSchema schema: String) -> String {
        "\(schema.quotedIdentifier).\(table.quotedIdentifier)"
    }
}
