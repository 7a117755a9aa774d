/// A device as push knows it: a user's device id. In the core because
/// ``PushMachine`` keys its targets by it; the store keys token rows by it too.
package struct PushDeviceKey: Hashable, Sendable, CustomStringConvertible {
    package var uid: String
    package var deviceId: String

    package init(uid: String, deviceId: String) {
        self.uid = uid
        self.deviceId = deviceId
    }

    package var description: String { "\(uid)/\(deviceId)" }
}
