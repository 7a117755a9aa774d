#if canImport(Glibc)
    import Glibc
#endif

/// Open-descriptor limits: ringbench's own, raised to fit the run, and the server's, read from /proc.
enum DescriptorLimit {
    /// Raises this process's soft `RLIMIT_NOFILE` to its hard limit; throws
    /// when even the hard limit is below `needed` descriptors.
    static func raise(toFit needed: Int, for what: String) throws {
        var limit = rlimit()
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else {
            throw RunError(message: "getrlimit: \(String(cString: strerror(errno)))")
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            guard setrlimit(resource, &limit) == 0 else {
                throw RunError(message: "setrlimit: \(String(cString: strerror(errno)))")
            }
        }
        guard limit.rlim_max >= UInt(needed) else {
            throw RunError(
                message: "\(what) need about \(needed) open descriptors, but ringbench's hard limit "
                    + "(RLIMIT_NOFILE) is \(limit.rlim_max): raise it (ulimit -Hn as root, or "
                    + "/etc/security/limits.conf) or ask for fewer")
        }
    }

    /// The soft "Max open files" of process `pid` from `/proc/PID/limits`;
    /// `Int.max` when unlimited, nil when unreadable.
    static func of(pid: Int32) -> Int? {
        guard let text = ProcessSample.read("/proc/\(pid)/limits"),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        let fields = line.split(separator: " ")
        guard fields.count > 3 else { return nil }
        return fields[3] == "unlimited" ? Int.max : Int(fields[3])
    }
}
