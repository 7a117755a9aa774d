import SignalProtocol

/// What push needs every node to hear (docs/CLUSTER.md, "Push"): that some
/// users' push tokens changed, as `{"pushTokens": [uid]}` (each node reads
/// them again, so the payload stays small and order cannot leave a node
/// behind), and that a call stopped ringing, as `{"pushStopped": sessionId,
/// "status": status}`, for the node that pushed its ring.
extension ClusterBroadcast {
    static func pushTokens(of uids: [String]) -> String {
        JSONValue.object([("pushTokens", .array(uids.map(JSONValue.string)))]).serialized
    }

    static func pushStopped(_ call: Call) -> String {
        JSONValue.object([("pushStopped", .string(call.sessionId)), ("status", .string(call.status.rawValue))])
            .serialized
    }

    /// Acts on a push broadcast (anything else is left alone), reading
    /// changed tokens on the listener's connection; a failed read throws,
    /// so that the listener attaches again (reading every token) rather
    /// than keep tokens it knows changed.
    ///
    /// A stop goes to the push worker through this node's cluster workers:
    /// the ring it stops was handed over by the job that committed it, on
    /// one of them, right after its COMMIT, so a stop run once every worker
    /// ran what it had queued cannot overtake it, however soon another node
    /// committed the stop.
    static func handlePush(
        _ document: JSONValue, for service: SignalingService, of node: ClusterNode,
        on connection: PostgresConnection
    ) throws(PostgresError) {
        if case .array(let members)? = document["pushTokens"] {
            let uids = members.compactMap(\.stringValue)
            do throws(StoreError) {
                service.pushTokens.replace(tokensOf: Set(uids), with: try connection.pushTokens(of: uids))
            } catch {
                throw PostgresError(
                    sqlState: nil,
                    message: "the push tokens of \(uids.joined(separator: ", ")) changed and cannot be read: "
                        + error.message)
            }
        } else if let sessionId = document["pushStopped"]?.stringValue,
            let status = document["status"]?.stringValue.flatMap(CallStatus.init(rawValue:))
        {
            guard let pushes = service.pushes else { return }
            node.workers.afterQueued { pushes.stopped(sessionId: sessionId, status: status) }
        }
    }
}
