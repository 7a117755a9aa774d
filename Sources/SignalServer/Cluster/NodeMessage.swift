import SignalCore
import SignalProtocol

/// What one transaction has for the devices of one node, sent with
/// `NOTIFY` on the node's channel when the transaction commits (so never
/// for a change that did not), in commit order: results, events, relayed
/// signals and closes, in the order the machine made them. Each frame is
/// written once however many devices get it.
///
/// Wire form (JSON): `{"frames": [text, …], "to": [[loop, connection,
/// frame], …, [loop, connection, code, reason], …]}`; an entry of three
/// numbers sends a frame, one of four closes the connection.
struct NodeMessage: Sendable, Equatable {
    private(set) var frames: [String] = []
    private(set) var entries: [Entry] = []

    enum Entry: Sendable, Equatable {
        case frame(loop: Int, connection: UInt64, index: Int)
        case close(loop: Int, connection: UInt64, code: UInt16, reason: String)
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Adds `frame` for each of `addresses`.
    mutating func send(_ frame: [UInt8], to addresses: some Sequence<DeviceAddress>) {
        let index = frames.count
        frames.append(String(decoding: frame, as: UTF8.self))
        for address in addresses {
            entries.append(.frame(loop: address.loop, connection: address.connection, index: index))
        }
    }

    mutating func close(_ address: DeviceAddress, code: WebSocketCloseCode, reason: String) {
        entries.append(.close(loop: address.loop, connection: address.connection, code: code.rawValue, reason: reason))
    }

    var body: String {
        let to: [JSONValue] = entries.map { entry in
            switch entry {
            case .frame(let loop, let connection, let index):
                .array([.integer(Int64(loop)), .integer(Int64(connection)), .integer(Int64(index))])
            case .close(let loop, let connection, let code, let reason):
                .array([.integer(Int64(loop)), .integer(Int64(connection)), .integer(Int64(code)), .string(reason)])
            }
        }
        return JSONValue.object([("frames", .array(frames.map(JSONValue.string))), ("to", .array(to))]).serialized
    }

    /// The deliveries `body` asks for, for ``SignalingService/deliver(_:timers:)``
    /// (addresses on the receiving node); nil for a body this build cannot read.
    static func deliveries(from body: String) -> [(DeviceAddress, Delivery)]? {
        guard let document = try? JSONValue.parse(body), case .array(let frameValues)? = document["frames"],
            case .array(let entries)? = document["to"]
        else { return nil }
        let frames = frameValues.map { $0.stringValue.map { Array($0.utf8) } }
        var deliveries: [(DeviceAddress, Delivery)] = []
        for entry in entries {
            guard case .array(let fields) = entry, fields.count >= 3, case .integer(let loop) = fields[0],
                case .integer(let connection) = fields[1], case .integer(let third) = fields[2],
                loop >= 0, connection >= 0
            else { return nil }
            let address = DeviceAddress(loop: Int(loop), connection: UInt64(connection))
            if fields.count == 4 {
                guard let code = UInt16(exactly: third), let reason = fields[3].stringValue else { return nil }
                deliveries.append((address, .close(code: WebSocketCloseCode(rawValue: code), reason: reason)))
            } else {
                guard third >= 0, Int(third) < frames.count, let frame = frames[Int(third)] else { return nil }
                deliveries.append((address, .frame(frame)))
            }
        }
        return deliveries
    }
}
