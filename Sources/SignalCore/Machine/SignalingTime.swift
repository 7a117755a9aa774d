/// The time an input happens at, on both clocks: the wall clock for the
/// timestamps calls carry on the wire, the monotonic clock for deadlines,
/// so that a step of the wall clock neither fires a timer early nor holds
/// it back.
public struct SignalingTime: Hashable, Sendable {
    /// Milliseconds since the Unix epoch.
    public var wall: Int64
    /// Milliseconds on CLOCK_MONOTONIC (any origin).
    public var monotonic: Int64

    public init(wall: Int64, monotonic: Int64) {
        self.wall = wall
        self.monotonic = monotonic
    }

    /// The monotonic time at which the wall clock will read `wall`, if it
    /// is not stepped meanwhile.
    func monotonic(atWall wall: Int64) -> Int64 { monotonic + (wall - self.wall) }
}
