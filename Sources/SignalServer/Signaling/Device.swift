/// Where a device is connected: the event loop and the connection on it.
public struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The loop's index in the server's group.
    public let loop: Int
    /// The connection's number, unique on its loop.
    public let connection: UInt64

    public init(loop: Int, connection: UInt64) {
        self.loop = loop
        self.connection = connection
    }

    public var description: String { "\(loop)/\(connection)" }
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
