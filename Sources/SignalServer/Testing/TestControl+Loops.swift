import Dispatch
import SignalReactor
import Synchronization

extension TestControl {
    /// Runs `body` on loop `index` and waits for it.
    func onLoop(
        _ index: Int, of service: SignalingService,
        _ body: @escaping @Sendable (SignalingLoop) -> Void
    ) throws(TestControlError) {
        guard let mailbox = service.mailboxes.withLock({ $0[index] }) else {
            throw TestControlError(.unavailable, "event loop \(index) is not serving")
        }
        try run(on: [mailbox], body)
    }

    /// Runs `body` on every loop and waits for all of them.
    func onEveryLoop(
        of service: SignalingService,
        _ body: @escaping @Sendable (SignalingLoop) -> Void
    ) throws(TestControlError) {
        try run(on: Array(service.mailboxes.withLock { $0 }.values), body)
    }

    /// Runs `body` on each mailbox's loop and waits, at most
    /// ``loopTimeout`` for a loop that has not started it. A task given up
    /// on never runs afterwards, so a late loop does nothing the caller
    /// no longer expects (take a timer, close a session).
    private func run(
        on mailboxes: [LoopMailbox], _ body: @escaping @Sendable (SignalingLoop) -> Void
    )
        throws(TestControlError)
    {
        let tasks = mailboxes.map { _ in LoopTask() }
        for (mailbox, task) in zip(mailboxes, tasks) {
            mailbox.submit { loop in
                guard task.start() else { return }
                if let state = loop.attachment(SignalingLoop.self) { body(state) }
                task.finished.signal()
            }
        }
        let deadline = DispatchTime.now() + Self.loopTimeout
        var late = false
        for task in tasks where task.finished.wait(timeout: deadline) == .timedOut {
            // Given up on unless it started meanwhile; then it is running: let it finish.
            if task.abandon() { late = true } else { task.finished.wait() }
        }
        if late { throw TestControlError(.unavailable, "an event loop did not answer in time") }
    }
}

/// Whether a task handed to a loop may still run: it starts, or the
/// waiter gives up on it, whichever comes first.
private final class LoopTask: Sendable {
    private static let pending = 0, started = 1, abandoned = 2
    private let state = Atomic(pending)
    /// Signalled once a started task has run.
    let finished = DispatchSemaphore(value: 0)

    /// On the loop: true when the task may run.
    func start() -> Bool {
        state.compareExchange(expected: Self.pending, desired: Self.started, ordering: .acquiringAndReleasing).exchanged
    }

    /// From the waiter: true when the task will never run.
    func abandon() -> Bool {
        state.compareExchange(expected: Self.pending, desired: Self.abandoned, ordering: .acquiringAndReleasing)
            .exchanged
    }
}
