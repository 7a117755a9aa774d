import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Key-at-a-time input from the terminal on stdin: canonical mode and echo
/// off (Ctrl-C still raises SIGINT), and the saved settings put back on every
/// way out: ``terminate(_:)``, any other `exit` (through `atexit`), and both
/// the first and a second stop signal (through ``StopSignals``).
enum Terminal {
    /// The settings to restore; nil when the terminal is untouched.
    private static let saved = Mutex<termios?>(nil)

    /// Switches stdin to key-at-a-time mode if it is a terminal of the
    /// foreground process group; returns whether it did.
    static func enterKeyMode() -> Bool {
        guard isatty(STDIN_FILENO) == 1, tcgetpgrp(STDIN_FILENO) == getpgrp() else { return false }
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return false }
        var keys = original
        keys.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &keys.c_cc) { controls in
            controls[Int(VMIN)] = 1
            controls[Int(VTIME)] = 0
        }
        saved.withLock { $0 = original }
        atexit { Terminal.restore() }
        guard tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0 else {
            restore()
            return false
        }
        return true
    }

    /// Puts the saved settings back, once; does nothing if none are saved.
    static func restore() {
        guard
            var original = saved.withLock({ settings in
                defer { settings = nil }
                return settings
            })
        else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }
}
