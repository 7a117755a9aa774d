/// Where a device is connected: the node (in a cluster), the event loop and
/// the connection on it.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The node's number in a cluster (docs/CLUSTER.md); 0 for a server of its own.
    public let node: Int64
    /// The loop's index in the server's group.
    public let loop: Int
    /// The connection's number, unique on its loop.
    public let connection: UInt64

    public init(node: Int64 = 0, loop: Int, connection: UInt64) {
        self.node = node
        self.loop = loop
        self.connection = connection
    }

    public var description: String { node == 0 ? "\(loop)/\(connection)" : "\(node)/\(loop)/\(connection)" }
}

/// An authenticated device: whose, which, and where.
public struct Device: Hashable, Sendable {
    public let uid: String
    /// The device id (client-chosen or server-assigned).
    public let deviceId: String
    public let address: DeviceAddress

    public init(uid: String, deviceId: String, address: DeviceAddress) {
        self.uid = uid
        self.deviceId = deviceId
        self.address = address
    }
}
