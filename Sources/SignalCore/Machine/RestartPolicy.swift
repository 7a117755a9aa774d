/// What happens to live calls when ringd stops and starts again
/// (`calls.onRestart`). In the core because the state table runs both.
public enum RestartPolicy: String, Sendable {
    /// A stop leaves them live in the store and the next start restores
    /// them: ongoing calls go on, ringing ones ring until their deadline.
    case resume
    /// A stop ends them with `server_shutdown`; a start ends those a crash
    /// left with `server_restart`.
    case end
}
