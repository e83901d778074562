/// A statement prepared on one ``PostgresConnection``: its server-side name and what
/// `PQdescribePrepared` said about it.
struct PostgresStatement {
    /// The SQL and the types its arguments were declared with: the same SQL bound with a
    /// `NULL` where an integer was is prepared again, since PostgreSQL fixes types at prepare.
    struct Key: Hashable {
        let sql: String
        let parameterTypes: [UInt32]
    }

    let name: String
    let parameterCount: Int
    /// The type OID of each result column.
    let columnTypes: [UInt32]
    /// 1 (binary) when every column's type has a binary reader, else 0 (text).
    let resultFormat: Int32

    init(name: String, parameterCount: Int, columnTypes: [UInt32]) {
        self.name = name
        self.parameterCount = parameterCount
        self.columnTypes = columnTypes
        self.resultFormat = columnTypes.allSatisfy(PostgresType.binaryReadable.contains) ? 1 : 0
    }
}
