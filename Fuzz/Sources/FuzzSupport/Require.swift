/// Traps with `message` unless `condition` holds. Unlike `precondition`,
/// the message survives an optimized build, so the fuzzer's log says which
/// invariant broke.
public func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
