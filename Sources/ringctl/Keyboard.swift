import Foundation

/// Reads stdin on a thread of its own and turns what it reads into call
/// actions: single key presses in key mode, else lines (`a`, `r`, `b` or `h`
/// and Enter). Other input is ignored; at the end of input it stops reading.
enum Keyboard {
    /// Starts reading; `post` gets each action in the order typed.
    static func start(keyMode: Bool, post: @escaping @Sendable (CallAction) -> Void) {
        let thread = Thread {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                if keyMode {
                    action(for: byte).map(post)
                } else if byte == UInt8(ascii: "\n") {
                    let typed = line.filter {
                        $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\t")
                    }
                    if typed.count == 1 { action(for: typed[0]).map(post) }
                    line = []
                } else {
                    line.append(byte)
                }
            }
        }
        thread.name = "ringctl-keyboard"
        thread.start()
    }

    /// The action of a key: a accept, r reject, b busy, h hang up.
    private static func action(for key: UInt8) -> CallAction? {
        switch key | 0x20 {
        case UInt8(ascii: "a"): .accept
        case UInt8(ascii: "r"): .reject(.rejected)
        case UInt8(ascii: "b"): .reject(.busy)
        case UInt8(ascii: "h"): .end
        default: nil
        }
    }
}
