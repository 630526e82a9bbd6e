/// A persistence flag as JSON, `{"name": "counted", "value": 3}`, wherever the CLI or the server writes one.
package struct PersistenceJSON: Encodable, Sendable, Hashable {
    /// The flag's name: `none`, `persisted`, `counted` or `status`.
    package var name: String
    /// The flag's number, as RongCloud numbers it (0, 1, 3, 16).
    package var value: UInt32

    /// A flag's name and number as given.
    package init(name: String, value: UInt32) {
        self.name = name
        self.value = value
    }

    /// The JSON of `flag`.
    package init(_ flag: Persistence) {
        self.init(name: flag.name, value: flag.rawValue)
    }
}
