#if canImport(Glibc)
    import Glibc
#endif

/// Whether a file holding a secret is shared beyond ringd's user, read from
/// its mode before the file is read. Nobody but the owner and, where
/// allowed, the group may have any access. A key ringd is handed
/// (`groupMayRead`) may let ringd's group read it when another user owns
/// it, as Kubernetes mounts secrets (owner root, group `fsGroup`, mode
/// 0440); a file ringd's user owns needs no group bit.
enum SecretFileMode {
    /// Why the file at `path` is too open (its mode and who has access), or
    /// nil when it is not, or cannot be examined (reading it then says why).
    static func problem(_ path: String, groupMayRead: Bool = true) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let mode = info.st_mode & 0o777
        let groupAllowed: mode_t = groupMayRead && info.st_uid != geteuid() ? 0o040 : 0
        guard mode & 0o077 & ~groupAllowed != 0 else { return nil }
        let who = mode & 0o007 != 0 ? "others" : "its group"
        return "mode 0\(String(mode, radix: 8)) gives \(who) access"
    }

    /// The refusal of `path`, named by its `setting`, holding `what`.
    static func refusal(_ setting: String, _ path: String, holding what: String) -> String? {
        problem(path).map { problem in
            "\(setting) \(path): \(problem) to \(what); run `chmod 600 \(path)` (or 0440 for a secret mounted "
                + "with its group, as Kubernetes does)"
        }
    }
}
