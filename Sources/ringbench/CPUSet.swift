#if canImport(Glibc)
    import Glibc
#endif

/// A CPU list like `0`, `1,3` or `0-2,5`, and pinning this process to it.
struct CPUSet {
    let cpus: [Int]

    init(_ list: String) throws {
        var cpus: [Int] = []
        for part in list.split(separator: ",") {
            let bounds = part.split(separator: "-").compactMap { Int($0) }
            guard bounds.count == (part.contains("-") ? 2 : 1), bounds[0] <= bounds[bounds.count - 1] else {
                throw RunError(message: "bad CPU list: \(list)")
            }
            cpus += Array(bounds[0] ... bounds[bounds.count - 1])
        }
        guard !cpus.isEmpty, cpus.allSatisfy({ $0 < 1024 }) else { throw RunError(message: "bad CPU list: \(list)") }
        self.cpus = cpus
    }

    /// Pins the calling process with `sched_setaffinity` (looked up at run
    /// time: Glibc's Swift module hides the GNU declaration).
    func pinCurrentProcess() throws {
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else {
            throw RunError(message: "sched_setaffinity not found")
        }
        var mask = [UInt64](repeating: 0, count: 16)
        for cpu in cpus { mask[cpu / 64] |= 1 << UInt64(cpu % 64) }
        let result = mask.withUnsafeBytes { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }
        guard result == 0 else { throw RunError(message: "sched_setaffinity: \(String(cString: strerror(errno)))") }
    }
}
