import SignalSystem

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time and memory of a process, from /proc.
struct ProcessSample {
    /// utime + stime in microseconds.
    let cpuMicros: Double
    /// VmRSS in KiB.
    let rssKiB: Int
    /// With several processes (``init(pids:)``): each one's utime + stime, in their order.
    var parts: [Double] = []

    init(pid: Int32) throws {
        let times = try ProcessSample.times(pid)
        cpuMicros = times.own
        let status = ProcessSample.read("/proc/\(pid)/status") ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        rssKiB = line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }

    /// The sum of `pids`' samples (CPU and RSS), each one's CPU in ``parts``.
    init(pids: [Int32]) throws {
        let samples = try pids.map { pid throws in try ProcessSample(pid: pid) }
        cpuMicros = samples.reduce(0) { $0 + $1.cpuMicros }
        rssKiB = samples.reduce(0) { $0 + $1.rssKiB }
        parts = samples.map(\.cpuMicros)
    }

    /// A process's utime + stime (`own`) and cutime + cstime (its children
    /// that exited and were waited for), in microseconds, and its parent.
    static func times(_ pid: Int32) throws -> (own: Double, children: Double, parent: Int32) {
        guard let stat = read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
            throw RunError(message: "cannot read /proc/\(pid)/stat")
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, ppid 4, utime 14, stime 15,
        // cutime 16, cstime 17 (1-based).
        guard fields.count > 14, let parent = Int32(fields[1]), let user = Double(fields[11]),
            let system = Double(fields[12]), let childUser = Double(fields[13]), let childSystem = Double(fields[14])
        else {
            throw RunError(message: "unexpected /proc/\(pid)/stat")
        }
        let tick = 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
        return ((user + system) * tick, (childUser + childSystem) * tick, parent)
    }

    /// The text of a file, nil when it cannot be read.
    static func read(_ path: String) -> String? {
        FileContents.read(path).map { String(decoding: $0, as: UTF8.self) }
    }
}

/// The CPU time of process trees (a database server: PostgreSQL's
/// postmaster and the backends it forks), in microseconds: every live
/// process's utime + stime + cutime + cstime. A child that exits between two
/// samples moves its time into its parent's cutime, so the difference of
/// two samples counts it once; a child started in between counts from zero.
struct ProcessTreeSample {
    let cpuMicros: Double
    /// Processes in the trees when sampled.
    let processes: Int

    init(roots: [Int32]) throws {
        var parents: [Int32: Int32] = [:]
        var times: [Int32: Double] = [:]
        for pid in ProcessTreeSample.allPIDs() {
            // A process may exit while /proc is listed.
            guard let sample = try? ProcessSample.times(pid) else { continue }
            parents[pid] = sample.parent
            times[pid] = sample.own + sample.children
        }
        for root in roots where times[root] == nil { _ = try ProcessSample.times(root) }
        let roots = Set(roots)
        let inTree = times.keys.filter { pid in
            var current: Int32? = pid
            var hops = 0
            while let at = current, hops < 64 {
                if roots.contains(at) { return true }
                current = parents[at]
                hops += 1
            }
            return false
        }
        cpuMicros = inTree.reduce(0) { $0 + times[$1]! }
        processes = inTree.count
    }

    /// Every process id /proc lists.
    private static func allPIDs() -> [Int32] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let pid = Int32(name) { pids.append(pid) }
        }
        return pids
    }
}

/// What a run measures besides its own numbers: the servers (their CPU
/// summed) and the database's process trees.
struct Meters {
    var serverPIDs: [Int32] = []
    var databasePIDs: [Int32] = []

    init(_ options: CallOptions) {
        serverPIDs = options.server.serverPIDs
        databasePIDs = options.databasePIDs
    }

    init(serverPIDs: [Int32] = [], databasePIDs: [Int32] = []) {
        (self.serverPIDs, self.databasePIDs) = (serverPIDs, databasePIDs)
    }

    /// The servers' sample: one process's as it is, several summed; nil without any.
    func sampleServers() throws -> ProcessSample? {
        switch serverPIDs.count {
        case 0: nil
        case 1: try ProcessSample(pid: serverPIDs[0])
        default: try ProcessSample(pids: serverPIDs)
        }
    }

    func sampleDatabase() throws -> ProcessTreeSample? {
        databasePIDs.isEmpty ? nil : try ProcessTreeSample(roots: databasePIDs)
    }
}
