import GRDB

extension Database {
    /// Runs one statement through this connection's statement cache. A statement run once per item (a pull's merge,
    /// an import, a rotation) is then parsed and authorised once per connection instead of once per item: preparing
    /// statements took half the CPU time of a 10,000-item pull.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// The first row `sql` selects, through the statement cache (see `run`).
    func row(_ sql: String, _ arguments: StatementArguments) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first value `sql` selects, through the statement cache (see `run`).
    func value<Value: DatabaseValueConvertible & StatementColumnConvertible>(
        _ type: Value.Type, _ sql: String, _ arguments: StatementArguments
    ) throws -> Value? {
        try Value.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}
