/// One row of a query result, its columns in select-list order.
public struct Row: Sendable, Hashable {
    public var values: [DatabaseValue]

    public init(_ values: [DatabaseValue]) { self.values = values }

    public subscript(index: Int) -> DatabaseValue { values[index] }
    public var count: Int { values.count }
}
