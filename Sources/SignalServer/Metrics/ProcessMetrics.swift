import Foundation

/// The standard `process_*` metrics, read from `/proc/self` at scrape time.
struct ProcessMetrics {
    var cpuSeconds: Double
    var residentBytes: Double
    var virtualBytes: Double
    var openFDs: Double
    var maxFDs: Double?
    /// Nil when `/proc/stat` is hidden (systemd's `ProcSubset=pid`, which the
    /// shipped unit sets): the start time counts from the boot time it holds.
    var startTimeSeconds: Double?

    /// Nil when `/proc` cannot be read (not Linux, or hidden).
    static func read() -> ProcessMetrics? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let fields = Self.statFields(stat), fields.count > 21,
            let userTicks = Double(fields[11]), let systemTicks = Double(fields[12]),
            let startTicks = Double(fields[19]), let virtualBytes = Double(fields[20]),
            let residentPages = Double(fields[21]),
            let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        // The directory listing holds its own descriptor for a moment: not one of ours.
        return ProcessMetrics(
            cpuSeconds: (userTicks + systemTicks) / ticks, residentBytes: residentPages * pageSize,
            virtualBytes: virtualBytes, openFDs: Double(max(0, descriptors.count - 1)),
            maxFDs: Self.maxOpenFiles(),
            startTimeSeconds: Self.bootTime().map { $0 + startTicks / ticks })
    }

    /// The fields of `/proc/self/stat` after the command name (which may hold
    /// spaces and parentheses, so the split starts after its last `)`):
    /// index 0 is field 3, `state`.
    static func statFields(_ stat: String) -> [Substring]? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    /// Seconds since the epoch at boot (`btime` in `/proc/stat`), which
    /// process start times in `/proc/self/stat` count from.
    private static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in stat.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// The soft `RLIMIT_NOFILE`; nil when unlimited (RLIM_INFINITY is all ones).
    private static func maxOpenFiles() -> Double? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Double(limit.rlim_cur)
    }

    func write(to text: inout PrometheusText) {
        text.single(
            "process_cpu_seconds_total", .counter, "Total user and system CPU time spent in seconds.", cpuSeconds)
        text.single("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.", residentBytes)
        text.single("process_virtual_memory_bytes", .gauge, "Virtual memory size in bytes.", virtualBytes)
        text.single("process_open_fds", .gauge, "Number of open file descriptors.", openFDs)
        if let maxFDs { text.single("process_max_fds", .gauge, "Maximum number of open file descriptors.", maxFDs) }
        if let startTimeSeconds {
            text.single(
                "process_start_time_seconds", .gauge, "Start time of the process since unix epoch in seconds.",
                startTimeSeconds)
        }
    }
}
