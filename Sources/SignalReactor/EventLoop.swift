import CShim
import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Something registered with an event loop for readiness on a descriptor.
public protocol Selectable: AnyObject {
    /// The descriptor is ready: `events` holds EPOLLIN/EPOLLOUT/EPOLLERR/EPOLLHUP bits.
    func handleEvents(_ events: UInt32)
}

/// One epoll event loop, running on (and only ever touched from) its own
/// thread. Level-triggered; other threads reach it only through ``mailbox``.
///
/// Not `Sendable` on purpose: everything registered here lives on this thread.
public final class EventLoop {
    /// The loop's index in its group.
    public let index: Int
    /// The way in from other threads.
    public let mailbox: LoopMailbox
    /// A scratch buffer shared by every connection of this loop for reads, so
    /// idle connections hold no read buffer of their own.
    public let readBuffer: UnsafeMutableRawBufferPointer

    private let epoll: FileDescriptor
    private let timerFD: FileDescriptor
    private var timers = TimerQueue()
    private var armedDeadline: Deadline?
    /// Registered handlers, indexed by descriptor; the generation tells a
    /// stale event for a closed descriptor from one for its reuse.
    private var registrations: [(generation: UInt32, handler: Selectable)?] = []
    private var nextGeneration: UInt32 = 1
    private var stopping = false
    private var shutdownHandlers: [() -> Void] = []
    private var tickEndActions: [() -> Void] = []
    /// Per-loop state of the layers above, one object per type.
    private var attachments: [ObjectIdentifier: AnyObject] = [:]

    /// The tag of the loop's own descriptors (mailbox, timer) in epoll data.
    private static let internalGeneration: UInt32 = 0

    init(index: Int, mailbox: LoopMailbox) throws(SystemError) {
        self.index = index
        self.mailbox = mailbox
        epoll = FileDescriptor(try syscallExpectingResult("epoll_create1") { cshim_epoll_create() })
        timerFD = FileDescriptor(try syscallExpectingResult("timerfd_create") { cshim_timerfd() })
        readBuffer = .allocate(byteCount: 64 * 1024, alignment: 16)
        try control(CSHIM_EPOLL_CTL_ADD, mailbox.eventFD, CSHIM_EPOLLIN, generation: Self.internalGeneration)
        try control(CSHIM_EPOLL_CTL_ADD, timerFD.rawValue, CSHIM_EPOLLIN, generation: Self.internalGeneration)
    }

    deinit { readBuffer.deallocate() }

    // MARK: Registration

    public func register(_ fd: Int32, events: UInt32, handler: Selectable) throws(SystemError) {
        let generation = nextGeneration
        nextGeneration = nextGeneration == UInt32.max ? 1 : nextGeneration + 1
        try control(CSHIM_EPOLL_CTL_ADD, fd, events, generation: generation)
        let slot = Int(fd)
        if slot >= registrations.count {
            registrations.append(contentsOf: repeatElement(nil, count: slot - registrations.count + 1))
        }
        registrations[slot] = (generation, handler)
    }

    public func modify(_ fd: Int32, events: UInt32) throws(SystemError) {
        guard Int(fd) < registrations.count, let registration = registrations[Int(fd)] else { return }
        try control(CSHIM_EPOLL_CTL_MOD, fd, events, generation: registration.generation)
    }

    /// Stops watching `fd` (call before closing it).
    public func deregister(_ fd: Int32) {
        guard Int(fd) < registrations.count, registrations[Int(fd)] != nil else { return }
        registrations[Int(fd)] = nil
        _ = try? syscall("epoll_ctl(DEL)") { cshim_epoll_ctl(epoll.rawValue, CSHIM_EPOLL_CTL_DEL, fd, 0, 0) }
    }

    private func control(_ op: Int32, _ fd: Int32, _ events: UInt32, generation: UInt32) throws(SystemError) {
        let data = UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd))
        _ = try syscallExpectingResult("epoll_ctl") { cshim_epoll_ctl(epoll.rawValue, op, fd, events, data) }
    }

    // MARK: Timers

    /// Runs `action` on this loop after `seconds`.
    @discardableResult
    public func schedule(after seconds: Double, _ action: @escaping () -> Void) -> TimerID {
        timers.schedule(at: Deadline.now().adding(seconds: seconds), action)
    }

    /// Cancels a timer that has not run yet.
    public func cancel(_ timer: TimerID) {
        timers.cancel(timer)
    }

    // MARK: Running

    /// Keeps `object` as this loop's state of its type, for as long as the
    /// loop lives; work handed to the loop finds it with ``attachment(_:)``.
    public func attach<T: AnyObject>(_ object: T) {
        attachments[ObjectIdentifier(T.self)] = object
    }

    public func attachment<T: AnyObject>(_ type: T.Type) -> T? {
        attachments[ObjectIdentifier(type)] as? T
    }

    /// Runs `action` once, at the end of the current pass of the loop: after
    /// every ready event, mailbox task and due timer of this wake-up. Work
    /// that many events of one pass each produce (waking another thread)
    /// can so be done once for all of them.
    public func atTickEnd(_ action: @escaping () -> Void) {
        tickEndActions.append(action)
    }

    /// Registers `handler` to run when the loop is asked to stop, before it exits.
    public func onShutdown(_ handler: @escaping () -> Void) {
        shutdownHandlers.append(handler)
    }

    /// Asks the loop to stop: runs the shutdown handlers now; the loop exits
    /// once no descriptor but its own is registered (pending timers of closed
    /// descriptors are dropped with the loop).
    public func stop() {
        guard !stopping else { return }
        stopping = true
        let handlers = shutdownHandlers
        shutdownHandlers.removeAll()
        for handler in handlers { handler() }
    }

    private var isDone: Bool {
        stopping && registrations.allSatisfy { $0 == nil }
    }

    /// Runs until stopped and drained, or until `epoll_wait` fails (a bug:
    /// the error is returned). Blocks only in `epoll_wait`.
    func run() -> SystemError? {
        var events = [cshim_event](repeating: cshim_event(), count: 256)
        while !isDone {
            armTimer()
            let count: Int32
            do {
                switch try syscall("epoll_wait", { cshim_epoll_wait(epoll.rawValue, &events, 256, -1) }) {
                case .processed(let n): count = n
                case .wouldBlock: continue
                }
            } catch {
                return error
            }
            for event in events.prefix(Int(count)) {
                dispatch(event)
            }
            runDueTimers()
            while !tickEndActions.isEmpty {
                let actions = tickEndActions
                tickEndActions.removeAll()
                for action in actions { action() }
            }
        }
        return nil
    }

    private func dispatch(_ event: cshim_event) {
        let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: event.data))
        let generation = UInt32(truncatingIfNeeded: event.data >> 32)
        if generation == Self.internalGeneration {
            if fd == mailbox.eventFD {
                for task in mailbox.drain() { task(self) }
            } else {
                var expirations: UInt64 = 0
                _ = try? syscall("read(timerfd)") { read(timerFD.rawValue, &expirations, 8) }
                armedDeadline = nil
            }
            return
        }
        guard Int(fd) < registrations.count, let registration = registrations[Int(fd)],
            registration.generation == generation
        else { return }
        registration.handler.handleEvents(event.events)
    }

    private func runDueTimers() {
        let now = Deadline.now()
        while let action = timers.popDue(now: now) { action() }
    }

    /// Points the timerfd at the earliest pending deadline, if that changed.
    private func armTimer() {
        let next = timers.nextDeadline()
        guard next != armedDeadline else { return }
        armedDeadline = next
        let nanoseconds = next.map { max($0.nanoseconds, 1) } ?? 0
        _ = try? syscall("timerfd_settime") { cshim_timerfd_arm(timerFD.rawValue, nanoseconds) }
    }
}
