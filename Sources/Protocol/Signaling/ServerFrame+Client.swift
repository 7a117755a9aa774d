/// How a client reads the server's frames: one reading for SignalClient and
/// RingKit, so both treat broken and unknown frames alike.
extension ServerFrame {
    /// What a client makes of one text message from the server.
    public enum Reading: Hashable, Sendable {
        /// A frame it understands.
        case frame(ServerFrame)
        /// A frame with an `id` that does not decode: the answer to that
        /// request is broken, so the request fails with this.
        case brokenAnswer(id: String, SignalError)
        /// Not JSON, or a frame of a kind it does not know without an `id`
        /// (a newer server's): skipped.
        case skipped
    }

    /// Reads the text message `bytes`.
    public static func read(_ bytes: [UInt8]) -> Reading {
        guard let json = try? JSONValue.parse(bytes) else { return .skipped }
        do {
            return .frame(try ServerFrame(json: json))
        } catch {
            guard let id = json["id"]?.stringValue else { return .skipped }
            return .brokenAnswer(id: id, SignalError(error.code, "malformed result: \(error.message)"))
        }
    }
}

extension ResultData {
    /// ``init(json:answering:)`` for a client: a failure names the request
    /// whose result is malformed.
    public static func decoding(_ data: JSONValue, answering type: RequestType) -> Result<ResultData, SignalError> {
        do throws(SignalError) {
            return .success(try ResultData(json: data, answering: type))
        } catch {
            return .failure(SignalError(error.code, "the \(type.rawValue) result is malformed: \(error.message)"))
        }
    }
}
