import Dispatch
import Foundation
import SignalCore
import SignalProtocol
import Synchronization

/// How one attempt ended.
enum WebhookAttemptResult: Sendable {
    /// The receiver answered with this HTTP status.
    case status(Int)
    /// No answer: a timeout, a refused connection, DNS, TLS (the message says which).
    case failure(String)
}

/// Sends one request and reports how it ended, off the caller's thread.
protocol WebhookPoster: Sendable {
    func post(
        url: String, headers: [(String, String)], body: [UInt8], timeout: Double,
        completion: @escaping @Sendable (WebhookAttemptResult) -> Void)
    /// Stops: what is in flight ends with a failure.
    func close()
}

/// Sends the outbox's pending deliveries on a thread of its own
/// (`ringd-webhooks`): the events of one call to one endpoint one after the
/// other, in the order of their changes (a call's `call_started` never
/// before its `call_initiated`), different calls in parallel up to the
/// endpoint's concurrency. A 2xx delivers; anything else is retried on the
/// settings' schedule with jitter until the last attempt marks the event
/// failed. Every outcome is written back to the store, off the call path:
/// a slow or dead receiver holds up nothing but its own events.
final class WebhookDispatcher: Sendable {
    /// The events of one call waiting for one endpoint.
    private struct Queue {
        /// Oldest change first; the first is the next to send.
        var deliveries: [WebhookDelivery]
        var inFlight = false
    }

    private struct QueueKey: Hashable {
        let endpoint: String
        let sessionId: String
    }

    private struct State {
        var queues: [QueueKey: Queue] = [:]
        /// Deliveries held in `queues`.
        var held = 0
        /// Set while the store holds pending deliveries memory does not:
        /// those of this position and later (all committed after the ones
        /// held, but for retried ones), read back as memory drains.
        var backlogFrom: Int64?
        var refilling = false
        /// When each queue's first delivery is due.
        var schedule = WebhookSchedule()
        /// Per endpoint, queues whose first delivery fell due while the
        /// endpoint had no free slot, in the order they fell due.
        var blocked: [String: BlockedQueues] = [:]
        var inFlight: [String: Int] = [:]
        /// Per endpoint: failures since the last log line, and when it was.
        var failures: [String: (count: Int, loggedAt: Int64)] = [:]
        var stopping = false
    }

    /// How often, at most, a failing endpoint is reported in the log.
    static let failureLogInterval: Int64 = 60_000
    /// How often settled rows past the retention are deleted, and how many per store job.
    static let pruneInterval: Int64 = 3_600_000
    static let pruneBatch = 1000

    let settings: WebhookSettings
    private let endpoints: [String: WebhookEndpoint]
    private let poster: any WebhookPoster
    private let store: any WebhookStore
    private let wall: @Sendable () -> Int64
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// The most deliveries held in memory (`webhooks.maxEventsInMemory`);
    /// beyond it they wait in the store only, so an endpoint down for a day
    /// costs disk, not memory.
    let memoryLimit: Int

    /// A dispatcher for `settings`' endpoints; ``start()`` starts sending.
    init(
        settings: WebhookSettings, poster: any WebhookPoster, store: any WebhookStore,
        wall: @escaping @Sendable () -> Int64
    ) {
        memoryLimit = settings.maxEventsInMemory
        self.settings = settings
        endpoints = Dictionary(
            settings.endpoints.filter(\.enabled).map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
        self.poster = poster
        self.store = store
        self.wall = wall
    }

    /// Starts sending what was enqueued and what comes.
    func start() {
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "ringd-webhooks"
        thread.start()
    }

    /// What the store held as pending at start, read with `limit`.
    func loaded(_ deliveries: [WebhookDelivery], limit: Int) {
        let page = Self.split(deliveries, limit: limit)
        state.withLock { state in
            Self.hold(page.held, in: &state)
            state.backlogFrom = page.next
        }
    }

    /// New deliveries, just committed (on the thread that ran the store's batch, in
    /// commit order). Past the memory limit they stay in the store only,
    /// until memory drains.
    func enqueueCommitted(_ deliveries: [WebhookDelivery]) {
        guard !deliveries.isEmpty else { return }
        state.withLock { state in
            guard state.backlogFrom == nil else { return }
            let room = max(0, memoryLimit - state.held)
            Self.hold(deliveries.prefix(room), in: &state)
            if deliveries.count > room { state.backlogFrom = deliveries[room].seq }
        }
        wake.signal()
    }

    /// Failed deliveries set pending again (a retry by hand): few, held
    /// whatever the limit.
    func enqueue(_ deliveries: [WebhookDelivery]) {
        guard !deliveries.isEmpty else { return }
        state.withLock { state in Self.hold(deliveries, in: &state) }
        wake.signal()
    }

    /// Deliveries a cluster's webhook leader claimed, read with `limit`:
    /// held, but for those held already (a claim may return a row again).
    /// A full read leaves the rest to the refills, as memory drains.
    func claimed(_ deliveries: [WebhookDelivery], limit: Int) {
        state.withLock { state in
            Self.holdNew(deliveries, in: &state)
            if deliveries.count >= limit { state.backlogFrom = (deliveries.last?.seq ?? 0) + 1 }
        }
        wake.signal()
    }

    /// Forgets every delivery held (a cluster node that stopped leading:
    /// they stay pending in the database, for the next leader). What is in
    /// flight finishes; whether its outcome is recorded is the store's call.
    func drop() {
        state.withLock { state in
            state.queues = [:]
            state.held = 0
            state.backlogFrom = nil
            state.schedule = WebhookSchedule()
            state.blocked = [:]
        }
    }

    /// ``hold(_:in:)`` for those of `deliveries` not held yet.
    private static func holdNew(_ deliveries: some Collection<WebhookDelivery>, in state: inout State) {
        let known = Set(state.queues.values.flatMap { $0.deliveries.map { DeliveryKey($0) } })
        hold(deliveries.filter { !known.contains(DeliveryKey($0)) }, in: &state)
    }

    /// Puts each delivery in its call's queue in the order of the changes,
    /// behind the one in flight (which must stay first), and schedules the
    /// queue when its first delivery changed.
    private static func hold(_ deliveries: some Collection<WebhookDelivery>, in state: inout State) {
        for delivery in deliveries {
            let key = QueueKey(endpoint: delivery.endpoint, sessionId: delivery.sessionId)
            var queue = state.queues[key] ?? Queue(deliveries: [])
            let start = min(queue.inFlight ? 1 : 0, queue.deliveries.count)
            let index = queue.deliveries[start...].firstIndex { $0.seq > delivery.seq } ?? queue.deliveries.count
            queue.deliveries.insert(delivery, at: index)
            state.queues[key] = queue
            state.held += 1
            if index == 0 { schedule(delivery, in: &state) }
        }
    }

    private static func schedule(_ first: WebhookDelivery, in state: inout State) {
        state.schedule.push(
            dueAt: first.nextAttemptAt, endpoint: first.endpoint, sessionId: first.sessionId,
            seq: first.seq)
    }

    /// The queue of `entry` if the entry still names its first delivery and
    /// nothing of it is in flight.
    private static func current(_ entry: WebhookSchedule.Entry, in state: State) -> QueueKey? {
        let key = QueueKey(endpoint: entry.endpoint, sessionId: entry.sessionId)
        guard let queue = state.queues[key], !queue.inFlight, queue.deliveries.first?.seq == entry.seq else {
            return nil
        }
        return key
    }

    /// Reads the store's backlog back once memory is half empty. The read
    /// runs on the store's writer, ordered with the commits: a delivery
    /// committed before it is in what it reads, one committed after it is
    /// enqueued after its completion cleared the backlog (or is read next time).
    private func refillIfDrained() {
        let from = state.withLock { state -> Int64? in
            guard let from = state.backlogFrom, !state.refilling, state.held <= memoryLimit / 2 else { return nil }
            state.refilling = true
            return from
        }
        guard let from else { return }
        let limit = readLimit(memoryLimit / 2)
        store.pendingWebhookDeliveries(from: from, limit: limit) { [self] result in
            state.withLock { state in
                state.refilling = false
                guard case .success(let deliveries) = result else { return }
                let page = Self.split(deliveries, limit: limit)
                Self.holdNew(page.held, in: &state)
                state.backlogFrom = page.next
            }
            wake.signal()
        }
    }

    /// Sends one test event to `endpoint` now, outside the outbox, and
    /// reports how it ended.
    func sendTest(to endpoint: WebhookEndpoint, completion: @escaping @Sendable (WebhookAttemptResult) -> Void) {
        let now = wall()
        let id = "evt_test_\(SessionID.random())"
        var body: [UInt8] = []
        JSONValue.object([
            ("trigger", .string("test")), ("id", .string(id)), ("createdAt", .integer(now)),
            ("data", .object([])),
        ]).write(into: &body)
        let headers: WebhookHeaders
        do { headers = try endpoint.signature.headers(id: id, timestamp: now / 1000, body: body) } catch {
            return completion(.failure("cannot sign the request: \(error)"))
        }
        poster.post(
            url: endpoint.url, headers: headers.fields.map { ($0.name, $0.value) }, body: body,
            timeout: settings.timeout, completion: completion)
    }

    /// The enabled endpoint at `url`.
    func endpoint(_ url: String) -> WebhookEndpoint? { endpoints[url] }

    /// The enabled endpoints' URLs.
    var endpointURLs: Dictionary<String, WebhookEndpoint>.Keys { endpoints.keys }

    /// Stops sending (what is in flight fails and stays pending in the
    /// store, for the next start) and waits for the thread.
    func stop() {
        state.withLock { $0.stopping = true }
        wake.signal()
        poster.close()
        finished.wait()
    }

    /// How many deliveries wait in memory, whether more wait in the store
    /// only, and the creation time of the oldest held.
    var depth: (pending: Int, backlog: Bool, oldestCreatedAt: Int64?) {
        state.withLock { state in
            let heads = state.queues.values.compactMap(\.deliveries.first)
            return (state.held, state.backlogFrom != nil, heads.map(\.createdAt).min())
        }
    }

    private func run() {
        var nextPrune = wall()
        while true {
            let now = wall()
            let (due, dueNext, stopping) = state.withLock { state in Self.pick(&state, now: now, settings: settings) }
            if stopping { return }
            for delivery in due { send(delivery) }
            if now >= nextPrune {
                nextPrune = now + Self.pruneInterval
                prune(now: now)
            }
            let nextDue = min(dueNext ?? nextPrune, nextPrune)
            _ = wake.wait(timeout: .now() + .milliseconds(Int(max(1, min(nextDue - wall(), Self.pruneInterval)))))
        }
    }

    /// The first delivery of every call that is due and not in flight, as
    /// far as each endpoint's concurrency allows (marked in flight): first
    /// those that waited for a free slot, then the schedule's. Also when
    /// the next one is due.
    private static func pick(
        _ state: inout State, now: Int64,
        settings: WebhookSettings
    ) -> ([WebhookDelivery], Int64?, Bool) {
        guard !state.stopping else { return ([], nil, true) }
        var due: [WebhookDelivery] = []
        func take(_ key: QueueKey) {
            state.inFlight[key.endpoint, default: 0] += 1
            state.queues[key]?.inFlight = true
            if let first = state.queues[key]?.deliveries.first { due.append(first) }
        }
        for endpoint in Array(state.blocked.keys) {
            var waiting = state.blocked.removeValue(forKey: endpoint) ?? BlockedQueues()
            while state.inFlight[endpoint, default: 0] < settings.concurrency, let entry = waiting.popFirst() {
                if let key = current(entry, in: state) { take(key) }
            }
            if !waiting.isEmpty { state.blocked[endpoint] = waiting }
        }
        while let entry = state.schedule.popDue(now: now) {
            guard let key = current(entry, in: state) else { continue }
            if state.inFlight[key.endpoint, default: 0] < settings.concurrency {
                take(key)
            } else {
                state.blocked[key.endpoint, default: BlockedQueues()].append(entry)
            }
        }
        return (due, state.schedule.nextDue, false)
    }

    /// Deletes settled rows older than the retention, a bounded job at a
    /// time, until none is left.
    private func prune(now: Int64) {
        store.pruneWebhookDeliveries(
            before: now - Int64(settings.retentionHours * 3_600_000),
            limit: Self.pruneBatch
        ) { [self] result in
            if case .success(let count) = result, count == Self.pruneBatch { prune(now: now) }
        }
    }

    private func send(_ delivery: WebhookDelivery) {
        guard let endpoint = endpoints[delivery.endpoint] else {
            return finish(delivery, .failure("the endpoint is no longer configured"))
        }
        // Signed anew for each attempt: receivers refuse an old timestamp.
        let headers: WebhookHeaders
        do {
            headers = try endpoint.signature.headers(
                id: delivery.eventId, timestamp: wall() / 1000, body: delivery.body)
        } catch {
            // Counted as a failed attempt: it is retried like one that found no receiver.
            return finish(delivery, .failure("cannot sign the request: \(error)"))
        }
        poster.post(
            url: endpoint.url, headers: headers.fields.map { ($0.name, $0.value) }, body: delivery.body,
            timeout: settings.timeout
        ) { [self] result in finish(delivery, result) }
    }

    /// Records how an attempt ended: delivered, failed for good, or due again later.
    private func finish(_ delivery: WebhookDelivery, _ result: WebhookAttemptResult) {
        // An attempt cut short by ringd's own stop is no attempt: the row
        // stays as it was, pending, for the next start.
        if case .failure = result, state.withLock({ $0.stopping }) { return }
        let now = wall()
        var updated = delivery
        updated.attempts += 1
        updated.updatedAt = now
        switch result {
        case .status(let status) where (200 ..< 300).contains(status):
            updated.status = .delivered
            updated.lastStatus = status
            updated.lastError = nil
        case .status(let status):
            updated.lastStatus = status
            updated.lastError = "HTTP \(status)"
        case .failure(let message):
            updated.lastStatus = nil
            updated.lastError = message
        }
        if updated.status == .pending {
            if updated.attempts >= settings.maxAttempts {
                updated.status = .failed
            } else {
                let delay = settings.retryDelay(after: updated.attempts) * Double.random(in: 1 ... 1.2)
                updated.nextAttemptAt = now + Int64(delay * 1000)
            }
        }
        let report = state.withLock { state -> String? in
            let key = QueueKey(endpoint: delivery.endpoint, sessionId: delivery.sessionId)
            state.inFlight[delivery.endpoint, default: 1] -= 1
            if var queue = state.queues[key] {
                queue.inFlight = false
                if updated.status == .pending {
                    queue.deliveries[0] = updated
                } else {
                    queue.deliveries.removeFirst()
                    state.held -= 1
                }
                state.queues[key] = queue.deliveries.isEmpty ? nil : queue
                if let first = queue.deliveries.first { Self.schedule(first, in: &state) }
            }
            return updated.status == .delivered ? nil : Self.noteFailure(&state, updated, now: now)
        }
        if let report { Log.warning(report) }
        let saved = updated
        store.saveWebhookAttempt(saved) { result in
            if case .failure(let error) = result, error.code != .closed {
                Log.error(
                    "webhook \(saved.eventId) to \(redactedURL(saved.endpoint)): cannot record the attempt: \(error)")
            }
        }
        // After the save is queued, so that a read of the backlog sees it.
        refillIfDrained()
        wake.signal()
    }

    /// Counts a failed attempt; returns a log line at most once per
    /// ``failureLogInterval`` per endpoint.
    private static func noteFailure(_ state: inout State, _ delivery: WebhookDelivery, now: Int64) -> String? {
        var entry = state.failures[delivery.endpoint] ?? (0, 0)
        entry.count += 1
        defer { state.failures[delivery.endpoint] = entry }
        guard now - entry.loggedAt >= failureLogInterval else { return nil }
        let count = entry.count
        entry = (0, now)
        let outcome = delivery.status == .failed ? "marked failed after \(delivery.attempts) attempts" : "will retry"
        return
            "webhook endpoint \(redactedURL(delivery.endpoint)) failing: \(count) attempt(s) failed since the last report; "
            + "last: event \(delivery.eventId), \(delivery.lastError ?? "no answer"), \(outcome)"
    }
}

/// One delivery's identity: its endpoint and change.
private struct DeliveryKey: Hashable {
    let endpoint: String
    let seq: Int64

    init(_ delivery: WebhookDelivery) {
        endpoint = delivery.endpoint
        seq = delivery.seq
    }
}
