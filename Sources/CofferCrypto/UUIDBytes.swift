import Foundation

extension UUID {
    /// A UUID from its 16 raw bytes (ids are stored and bound into associated data as raw bytes). Callers check the
    /// length of bytes read from files or the network first.
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        self = UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }

    /// The 16 raw bytes.
    public var bytes: [UInt8] { withUnsafeBytes(of: uuid) { Array($0) } }
}
