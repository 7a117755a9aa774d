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

    init(pid: Int32) throws {
        guard let stat = ProcessSample.read("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else {
            throw RunError(message: "cannot read /proc/\(pid)/stat")
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based).
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw RunError(message: "unexpected /proc/\(pid)/stat")
        }
        cpuMicros = (user + system) * 1e6 / Double(sysconf(Int32(_SC_CLK_TCK)))
        let status = ProcessSample.read("/proc/\(pid)/status") ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        rssKiB = line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    }

    /// The text of a file, nil when it cannot be read.
    static func read(_ path: String) -> String? {
        FileContents.read(path).map { String(decoding: $0, as: UTF8.self) }
    }
}
