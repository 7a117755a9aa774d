import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension SignalingIntegration {
    /// A unix datagram socket standing in for systemd's NOTIFY_SOCKET: what
    /// ringd sends with sd_notify arrives here, one datagram a notification.
    final class NotifySocket {
        let path: String
        private let fd: Int32

        /// Binds `path` (in a temporary directory: sun_path holds 107 bytes).
        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw ClientError("socket(AF_UNIX): \(String(cString: strerror(errno)))") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
                close(fd)
                throw ClientError("\(path) is too long for a unix socket")
            }
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
            let bound = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else {
                let message = String(cString: strerror(errno))
                close(fd)
                throw ClientError("bind \(path): \(message)")
            }
        }

        deinit { close(fd) }

        /// The next notification, or nil when none arrived by `deadline`.
        func next(until deadline: Double) -> String? {
            while true {
                let left = deadline - monotonicSeconds()
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&pfd, 1, Int32(max(0, (left * 1000).rounded(.up))))
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { return nil }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return nil }
                return String(decoding: buffer[0 ..< count], as: UTF8.self)
            }
        }

        /// The next notification within `timeout` seconds, split into its `KEY=VALUE` lines.
        func nextLines(timeout: Double) -> [String]? {
            next(until: monotonicSeconds() + timeout).map { $0.split(separator: "\n").map(String.init) }
        }
    }
}
