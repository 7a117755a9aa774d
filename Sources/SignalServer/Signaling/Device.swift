/// Where a device is connected: the node (in a cluster), the event loop and
/// the connection on it.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The node in the high 40 bits, the loop in the low 24: an address
    /// stays 16 bytes, as before nodes, in every map of devices.
    private let nodeAndLoop: UInt64
    /// The connection's number, unique on its loop.
    public let connection: UInt64

    /// Loops per server at most (far beyond any `threads`).
    static let loopLimit = 1 << 24

    public init(node: Int64 = 0, loop: Int, connection: UInt64) {
        precondition(node >= 0 && node < 1 << 40 && loop >= 0 && loop < Self.loopLimit,
                     "node \(node) or loop \(loop) out of range")
        nodeAndLoop = UInt64(node) << 24 | UInt64(loop)
        self.connection = connection
    }

    /// The node's number in a cluster (docs/CLUSTER.md); 0 for a server of its own.
    public var node: Int64 { Int64(nodeAndLoop >> 24) }
    /// The loop's index in the server's group.
    public var loop: Int { Int(nodeAndLoop & UInt64(Self.loopLimit - 1)) }

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
