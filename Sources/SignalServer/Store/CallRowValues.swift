import SignalProtocol

/// A call row's values as either store reads them (the enums and the
/// metadata as text), so that SQLite and PostgreSQL decode a ``Call`` and
/// refuse a value this build does not know with the same words.
struct CallRowValues {
    var sessionId: String
    var callType: String?
    var status: String?
    var initiator: String
    var receiver: String
    var initiatorDevice: String?
    var initiatedAt: Int64
    var acceptedAt: Int64?
    var endedAt: Int64?
    var acceptedBy: String?
    var endedBy: String?
    var endReason: String?
    var timeoutMs: Int64
    var metadata: String?
    var seq: Int64
    var rejectReason: String?
    var initiatorName: String?
    var initiatorAvatarUrl: String?
    var receiverName: String?
    var receiverAvatarUrl: String?
    var silent: Bool

    func decoded() throws(StoreError) -> Call {
        func corrupt(_ what: String, _ value: String?) -> StoreError {
            StoreError(.corruptRow, "call \(sessionId) has \(what) \(value.map { "'\($0)'" } ?? "NULL")")
        }
        guard let type = callType.flatMap(CallType.init(rawValue:)) else { throw corrupt("call type", callType) }
        guard let state = status.flatMap(CallStatus.init(rawValue:)) else { throw corrupt("status", status) }
        var reason: EndReason?
        if let endReason {
            guard let known = EndReason(rawValue: endReason) else { throw corrupt("end reason", endReason) }
            reason = known
        }
        var parsed: JSONValue?
        if let metadata {
            do throws(JSONParseError) {
                parsed = try JSONValue.parse(metadata)
            } catch {
                throw StoreError(.corruptRow, "call \(sessionId) has unreadable metadata: \(error)")
            }
        }
        return Call(
            sessionId: sessionId, callType: type, status: state, initiator: initiator, receiver: receiver,
            initiatorDevice: initiatorDevice, initiatedAt: initiatedAt, acceptedAt: acceptedAt, endedAt: endedAt,
            acceptedBy: acceptedBy, endedBy: endedBy, endReason: reason, timeoutMs: timeoutMs, metadata: parsed,
            seq: seq, rejectReason: rejectReason, initiatorName: initiatorName, initiatorAvatarUrl: initiatorAvatarUrl,
            receiverName: receiverName, receiverAvatarUrl: receiverAvatarUrl, silent: silent)
    }
}
