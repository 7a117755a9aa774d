/// Which `RINGD_…` variables of the environment configure ringd, which are
/// someone else's, and what a misspelt one was meant to be.
///
/// Kubernetes gives every pod of a namespace variables for each Service in
/// it, unless the pod sets `enableServiceLinks: false`: a Service named
/// `ringd` brings `RINGD_SERVICE_HOST`, `RINGD_SERVICE_PORT`,
/// `RINGD_SERVICE_PORT_<NAME>`, `RINGD_PORT` (`tcp://10.96.0.12:443`) and
/// `RINGD_PORT_443_TCP`, `…_TCP_PROTO`, `…_TCP_PORT`, `…_TCP_ADDR`; one named
/// `ringd-cluster` the same under `RINGD_CLUSTER_`. Those are not ringd's, so
/// they are passed over (and said at debug level); any other unknown
/// `RINGD_…` name is a mistake worth stopping for, with the nearest key.
enum EnvironmentOverrides {
    /// Variables the test suites set for themselves, never ringd's.
    static let testsPrefix = "RINGD_TESTS_"

    /// The names among `environment`'s `RINGD_…` variables that no key
    /// reads and that Kubernetes injected for a Service; throws for any
    /// other name no key reads.
    static func ignored(in environment: [String: String], known: Set<String>) throws(ConfigError) -> [String] {
        var ignored: [String] = []
        for (name, value) in environment.sorted(by: { $0.key < $1.key })
        where name.hasPrefix("RINGD_") && !name.hasPrefix(testsPrefix) && !known.contains(name) {
            guard isServiceLink(name, value: value) else {
                let hint = nearest(to: name, among: known).map { "; did you mean \($0)?" } ?? ""
                throw ConfigError(
                    "\(name) matches no configuration key (RINGD_ plus a key in upper snake case, "
                        + "e.g. RINGD_LISTEN_PORT)\(hint)")
            }
            ignored.append(name)
        }
        return ignored
    }

    /// Whether `name` has the shape of a Kubernetes service link. A bare
    /// `…_PORT` must also hold a `proto://host:port` value, so that a
    /// misspelt key ending in `_PORT` (`RINGD_LISTN_PORT=8787`) is still caught.
    static func isServiceLink(_ name: String, value: String) -> Bool {
        let parts = name.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count >= 2 else { return false }
        if let service = parts.lastIndex(of: "SERVICE"), service >= 1 {
            let rest = parts[(service + 1)...]
            // _SERVICE_HOST, _SERVICE_PORT, _SERVICE_PORT_<NAME>
            return rest == ["HOST"] || rest.first == "PORT"
        }
        // _PORT_<n>_<PROTO>, then optionally _PROTO, _PORT or _ADDR.
        let numbered = parts.indices.contains { port in
            guard port >= 1, parts[port] == "PORT", port + 2 < parts.count, !parts[port + 1].isEmpty,
                parts[port + 1].allSatisfy(\.isNumber), ["TCP", "UDP", "SCTP"].contains(parts[port + 2])
            else { return false }
            let tail = parts[(port + 3)...]
            return tail.isEmpty || tail == ["PROTO"] || tail == ["PORT"] || tail == ["ADDR"]
        }
        return numbered || (parts.last == "PORT" && isServiceAddress(value))
    }

    /// `tcp://10.96.0.12:443` and the like: a Service's address.
    static func isServiceAddress(_ value: String) -> Bool {
        ["tcp://", "udp://", "sctp://"].contains { value.lowercased().hasPrefix($0) }
    }

    /// The known name closest to `name` by edit distance, if close enough
    /// to be a slip (at most a third of its length).
    static func nearest(to name: String, among known: Set<String>) -> String? {
        let target = Array(name.utf8)
        let best = known.map { ($0, distance(target, Array($0.utf8))) }
            .min { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }
        guard let best, best.1 <= max(2, (target.count - "RINGD_".count) / 3) else { return nil }
        return best.0
    }

    /// Levenshtein distance, one row at a time.
    private static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0 ... b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
