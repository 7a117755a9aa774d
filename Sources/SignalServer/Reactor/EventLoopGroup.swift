import Foundation
import Synchronization

/// A fixed set of event loops, one thread each.
public final class EventLoopGroup: Sendable {
    /// The mailboxes of the loops, in index order.
    public let mailboxes: [LoopMailbox]
    private let finished: [DispatchSemaphore]

    /// Starts `count` loops. `setUp` runs on each loop's thread before it
    /// starts serving, in index order (loop 0 first); a failure stops every
    /// loop started so far and is rethrown here.
    public init(count: Int, setUp: @escaping @Sendable (EventLoop) throws -> Void) throws {
        var mailboxes: [LoopMailbox] = []
        var finished: [DispatchSemaphore] = []
        do {
            for index in 0 ..< max(1, count) {
                let mailbox = try LoopMailbox()
                let done = DispatchSemaphore(value: 0)
                try Self.startThread(index: index, mailbox: mailbox, done: done, setUp: setUp)
                mailboxes.append(mailbox)
                finished.append(done)
            }
        } catch {
            for mailbox in mailboxes { mailbox.submit { $0.stop() } }
            for done in finished { done.wait() }
            throw error
        }
        self.mailboxes = mailboxes
        self.finished = finished
    }

    /// Starts one loop thread and waits until its set-up has run.
    private static func startThread(index: Int, mailbox: LoopMailbox, done: DispatchSemaphore,
                                    setUp: @escaping @Sendable (EventLoop) throws -> Void) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            let result = Result<EventLoop, any Error> {
                let loop = try EventLoop(index: index, mailbox: mailbox)
                try setUp(loop)
                return loop
            }
            outcome.withLock { $0 = result.map { _ in } }
            ready.signal()
            if case .success(let loop) = result { loop.run() }
        }
        thread.name = "ringd-loop-\(index)"
        thread.start()
        ready.wait()
        try outcome.withLock { $0 }?.get()
    }

    /// Asks every loop to stop; each finishes closing its connections first.
    public func stop() {
        for mailbox in mailboxes { mailbox.submit { $0.stop() } }
    }

    /// Blocks until every loop has exited.
    public func wait() {
        for done in finished {
            done.wait()
            done.signal()
        }
    }
}
