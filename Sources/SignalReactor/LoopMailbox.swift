import CShim
import SignalSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Work handed to an event loop from any thread: a locked queue plus an
/// eventfd that wakes the loop. The only part of a loop other threads touch.
public final class LoopMailbox: Sendable {
    /// A unit of work; it runs on the loop's thread and receives the loop.
    public typealias Task = @Sendable (EventLoop) -> Void

    private let queue = Mutex<[Task]>([])
    /// The eventfd this mailbox owns; the loop polls it.
    let eventFD: Int32

    /// A mailbox with a fresh non-blocking eventfd.
    init() throws(SystemError) {
        eventFD = try syscallExpectingResult("eventfd") { cshim_eventfd() }
    }

    deinit { closeDescriptor(eventFD) }

    /// Queues `task` for the loop and wakes it if it was not already woken.
    public func submit(_ task: @escaping Task) {
        let wasEmpty = queue.withLock { tasks in
            tasks.append(task)
            return tasks.count == 1
        }
        guard wasEmpty else { return }
        var one: UInt64 = 1
        // A full counter (EAGAIN) still means the loop will wake; nothing else can fail here.
        _ = try? syscall("write(eventfd)") { write(eventFD, &one, 8) }
    }

    /// Takes every queued task, clearing the wake-up counter first so a task
    /// submitted meanwhile wakes the loop again.
    func drain() -> [Task] {
        var counter: UInt64 = 0
        _ = try? syscall("read(eventfd)") { read(eventFD, &counter, 8) }
        return queue.withLock { tasks in
            let taken = tasks
            tasks.removeAll()
            return taken
        }
    }
}
