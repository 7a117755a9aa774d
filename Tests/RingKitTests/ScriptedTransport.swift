import RingKit
import Synchronization

/// An in-memory transport the test plays the server on: each opened
/// connection arrives in ``opened``; opens fail while ``failures`` (set
/// by the test) last.
final class ScriptedTransport: RingTransport {
    let opened = Inbox<ScriptedConnection>()
    /// What the next opens throw, in turn; then they succeed.
    let failures = Mutex<[RingError]>([])
    private let attempts = Atomic(0)

    /// How many opens were tried.
    var openAttempts: Int { attempts.load(ordering: .relaxed) }

    func open(
        url: String, onEvent: @escaping @Sendable (RingTransportEvent) -> Void
    ) async throws(RingError) -> any RingTransportConnection {
        attempts.add(1, ordering: .relaxed)
        if let failure = failures.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw failure }
        let connection = ScriptedConnection(onEvent)
        opened.put(connection)
        return connection
    }
}

/// One scripted connection: what the client sends arrives in ``sent``; the
/// test answers with ``reply(_:_:)``, pushes with ``deliver(_:)`` and ends it with ``drop(code:)``.
final class ScriptedConnection: RingTransportConnection {
    let sent = Inbox<String>()
    let closedWith = Mutex<UInt16?>(nil)
    private let onEvent: @Sendable (RingTransportEvent) -> Void

    init(_ onEvent: @escaping @Sendable (RingTransportEvent) -> Void) {
        self.onEvent = onEvent
    }

    func send(_ text: String) { sent.put(text) }

    func close(code: UInt16) {
        closedWith.withLock { $0 = code }
        onEvent(.closed(code: code, reason: "closed by the client"))
    }

    /// The next request the client sent, parsed; nil when none came in time.
    func nextRequest() async -> ClientFrame? {
        guard let text = await sent.next() else { return nil }
        return try? ClientFrame.parse(Array(text.utf8))
    }

    /// Answers request `id` with `data`.
    func reply(_ id: String, _ data: ResultData) {
        deliver(.result(id: id, .success(data.json)))
    }

    func deliver(_ frame: ServerFrame) {
        onEvent(.text(String(decoding: frame.encoded, as: UTF8.self)))
    }

    /// A raw text frame from the "server".
    func deliver(text: String) { onEvent(.text(text)) }

    /// The connection ends: with `code` as if a close frame came, nil as a lost network.
    func drop(code: UInt16?) { onEvent(.closed(code: code, reason: "")) }
}
