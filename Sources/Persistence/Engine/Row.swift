/// One row of a query result, its columns in select-list order.
public struct Row: Sendable, Hashable {
    /// The column values, in select-list order.
    public var values: [DatabaseValue]

    /// A row of these values.
    public init(_ values: [DatabaseValue]) { self.values = values }

    /// The value of the column at `index`, counting from 0 in select-list order.
    public subscript(index: Int) -> DatabaseValue { values[index] }
    /// How many columns the row has.
    public var count: Int { values.count }
}
