/// A weak reference to a loop-bound object that may travel to other threads
/// but is only ever dereferenced on the loop that created it (checked), so
/// the object itself need not be `Sendable`.
public struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    private weak var value: Value?
    private let owner: ObjectIdentifier

    public init(_ value: Value, on loop: EventLoop) {
        self.value = value
        owner = ObjectIdentifier(loop)
    }

    /// The object, if it still exists; `loop` must be the owning loop.
    public func value(on loop: EventLoop) -> Value? {
        precondition(ObjectIdentifier(loop) == owner, "a loop-bound object was touched from another loop")
        return value
    }
}
