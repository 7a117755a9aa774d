/// How long `initiateCall` asks for the callee to be rung, in one of the
/// two ways the wire allows: `timeout` in whole seconds (the field the
/// protocol always had) or `timeoutMs` in milliseconds, for a test that
/// rings in real time for a fraction of a second. A frame carries one or
/// neither; both is a validation error, since they could disagree.
public enum RingTimeout: Hashable, Sendable, ExpressibleByIntegerLiteral {
    /// `timeout`: whole seconds, within ``secondsRange``.
    case seconds(Int)
    /// `timeoutMs`: milliseconds, within ``millisecondsRange``.
    case milliseconds(Int64)

    /// What `timeout` may be.
    public static let secondsRange: ClosedRange<Int64> = 1 ... 300
    /// What `timeoutMs` may be: the same ceiling, and a floor under which a
    /// ring would end before the callee's devices could have heard it.
    public static let millisecondsRange: ClosedRange<Int64> = 50 ... 300_000

    /// A literal is seconds, as `timeout` always was.
    public init(integerLiteral seconds: Int) { self = .seconds(seconds) }

    /// The duration in milliseconds (saturated for seconds no range allows).
    public var inMilliseconds: Int64 {
        switch self {
        case .seconds(let seconds):
            let (product, overflow) = Int64(clamping: seconds).multipliedReportingOverflow(by: 1000)
            return overflow ? (seconds < 0 ? .min : .max) : product
        case .milliseconds(let milliseconds):
            return milliseconds
        }
    }

    /// The member of the `initiateCall` frame that says it.
    var member: (key: String, value: JSONValue) {
        switch self {
        case .seconds(let seconds): ("timeout", .integer(Int64(seconds)))
        case .milliseconds(let milliseconds): ("timeoutMs", .integer(milliseconds))
        }
    }

    /// `timeout` or `timeoutMs` of an `initiateCall` frame, checked against
    /// its range; nil when the frame has neither.
    static func parse(_ fields: JSONFields) throws(SignalError) -> RingTimeout? {
        switch (try fields.optionalInteger("timeout"), try fields.optionalInteger("timeoutMs")) {
        case (nil, nil):
            return nil
        case (let seconds?, nil):
            guard secondsRange.contains(seconds) else {
                throw SignalError(
                    .validation,
                    "timeout must be an integer from \(secondsRange.lowerBound) to "
                        + "\(secondsRange.upperBound) seconds")
            }
            return .seconds(Int(seconds))
        case (nil, let milliseconds?):
            guard millisecondsRange.contains(milliseconds) else {
                throw SignalError(
                    .validation,
                    "timeoutMs must be an integer from \(millisecondsRange.lowerBound) to "
                        + "\(millisecondsRange.upperBound) milliseconds")
            }
            return .milliseconds(milliseconds)
        case (_?, _?):
            throw SignalError(.validation, "give timeout (seconds) or timeoutMs (milliseconds), not both")
        }
    }
}
