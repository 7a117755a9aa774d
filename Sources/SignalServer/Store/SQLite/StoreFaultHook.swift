/// Where a ``StoreFaultHook`` is asked whether the store should fail.
public enum StoreFaultPoint: Hashable, Sendable {
    /// A write transaction is about to commit: an error rolls the whole batch
    /// back and every job in it gets the error.
    case commit
}

/// Decides, in each batch, whether the store fails at a point.
public typealias StoreFaultHook = @Sendable (StoreFaultPoint) -> StoreError?
