import CShim
import Foundation
import SignalSystem
import Synchronization

/// A fixed set of event loops, one thread each.
public final class EventLoopGroup: Sendable {
    /// The mailboxes of the loops, in index order.
    public let mailboxes: [LoopMailbox]
    private let finished: [DispatchSemaphore]

    /// Starts `count` loops on threads named `name-N`. `setUp` runs on each
    /// loop's thread before it starts serving, in index order (loop 0
    /// first); a failure stops every loop started so far and is rethrown
    /// here. A loop whose `epoll_wait` fails (a bug) reports it to
    /// `onFailure` and exits.
    public init(
        count: Int, name: String = "ringd-loop",
        onFailure: @escaping @Sendable (Int, SystemError) -> Void = EventLoopGroup.reportToStandardError,
        setUp: @escaping @Sendable (EventLoop) throws -> Void
    ) throws {
        var mailboxes: [LoopMailbox] = []
        var finished: [DispatchSemaphore] = []
        do {
            for index in 0 ..< max(1, count) {
                let mailbox = try LoopMailbox()
                let done = DispatchSemaphore(value: 0)
                try Self.startThread(
                    index: index, name: name, mailbox: mailbox, done: done,
                    onFailure: onFailure, setUp: setUp)
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
    private static func startThread(
        index: Int, name: String, mailbox: LoopMailbox, done: DispatchSemaphore,
        onFailure: @escaping @Sendable (Int, SystemError) -> Void,
        setUp: @escaping @Sendable (EventLoop) throws -> Void
    ) throws {
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let threadName = "\(name)-\(index)"
        let thread = Thread {
            defer { done.signal() }
            _ = cshim_name_thread(threadName)
            let result = Result<EventLoop, any Error> {
                let loop = try EventLoop(index: index, mailbox: mailbox)
                try setUp(loop)
                return loop
            }
            outcome.withLock { $0 = result.map { _ in } }
            ready.signal()
            if case .success(let loop) = result, let error = loop.run() { onFailure(index, error) }
        }
        thread.name = threadName
        thread.start()
        ready.wait()
        try outcome.withLock { $0 }?.get()
    }

    /// Asks every loop to stop; each finishes closing its connections first.
    public func stop() {
        for mailbox in mailboxes { mailbox.submit { $0.stop() } }
    }

    /// Writes a loop's failure to standard error.
    public static func reportToStandardError(_ index: Int, _ error: SystemError) {
        FileHandle.standardError.write(Data("event loop \(index): \(error)\n".utf8))
    }

    /// Blocks until every loop has exited.
    public func wait() {
        for done in finished {
            done.wait()
            done.signal()
        }
    }
}
