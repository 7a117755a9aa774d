import SignalProtocol

/// One configuration key and the helpers that make the usual kinds.
extension ConfigLoader {
    /// One configuration key: its dotted path and how to apply a value.
    struct Key: Sendable {
        /// The dotted path, e.g. `listen.port`.
        let path: String
        /// What the value must be, for messages.
        let expectation: String
        /// Whether the value is a secret, never echoed in messages.
        var isSecret = false
        /// Applies a value; false when it does not meet the expectation.
        let apply: @Sendable (inout ServerConfig, JSONValue) -> Bool
        /// Why a refused value is wrong, when there is more to say than the
        /// expectation (a list of objects); never echoes a secret.
        var explain: (@Sendable (JSONValue) -> String?)?

        /// The environment variable overriding this key: `RINGD_` plus the
        /// path in upper snake case (`listen.port` → `RINGD_LISTEN_PORT`).
        var environmentName: String {
            var name = "RINGD_"
            for character in path {
                if character == "." {
                    name += "_"
                } else if character.isUppercase {
                    name += "_" + String(character)
                } else {
                    name += character.uppercased()
                }
            }
            return name
        }
    }

    static func integer(
        _ path: String, _ field: WritableKeyPath<ServerConfig, Int> & Sendable, _ range: ClosedRange<Int>
    ) -> Key {
        Key(path: path, expectation: "an integer from \(range.lowerBound) to \(range.upperBound)") { config, value in
            guard let number = value.integerValue, number >= range.lowerBound, number <= range.upperBound else {
                return false
            }
            config[keyPath: field] = Int(number)
            return true
        }
    }

    static func seconds(
        _ path: String, _ field: WritableKeyPath<ServerConfig, Double> & Sendable,
        _ range: ClosedRange<Double> = 0.01 ... 86400
    ) -> Key {
        func shown(_ bound: Double) -> String { bound == bound.rounded() ? String(Int(bound)) : String(bound) }
        return Key(
            path: path, expectation: "a number of seconds from \(shown(range.lowerBound)) to \(shown(range.upperBound))"
        ) {
            config, value in
            let number: Double
            switch value {
            case .integer(let integer): number = Double(integer)
            case .double(let double): number = double
            default: return false
            }
            guard range.contains(number) else { return false }
            config[keyPath: field] = number
            return true
        }
    }

    /// A JSON boolean (`true`/`false` from the environment).
    static func boolean(_ path: String, _ field: WritableKeyPath<ServerConfig, Bool> & Sendable) -> Key {
        Key(path: path, expectation: "true or false") { config, value in
            guard case .bool(let flag) = value else { return false }
            config[keyPath: field] = flag
            return true
        }
    }

    /// A list of non-empty strings: a JSON array, or (from the environment) a
    /// comma-separated string.
    static func keyList(_ path: String, _ field: WritableKeyPath<ServerConfig, [String]> & Sendable) -> Key {
        Key(path: path, expectation: "a list of non-empty strings", isSecret: true) { config, value in
            let items: [String]?
            switch value {
            case .array(let values): items = values.map { $0.stringValue ?? "" }
            case .string(let text): items = text.split(separator: ",").map { $0.trimmingWhitespace() }
            default: items = nil
            }
            guard let items, items.allSatisfy({ !$0.isEmpty }) else { return false }
            config[keyPath: field] = items
            return true
        }
    }

    /// A secret string of at least `minimumBytes` bytes of UTF-8, or null for
    /// none; never echoed in errors (``Key/isSecret``).
    static func optionalSecret(
        _ path: String, _ field: WritableKeyPath<ServerConfig, String?> & Sendable, minimumBytes: Int = 16
    ) -> Key {
        Key(path: path, expectation: "a string of at least \(minimumBytes) bytes, or null", isSecret: true) {
            config, value in
            switch value {
            case .null: config[keyPath: field] = nil
            case .string(let secret) where secret.utf8.count >= minimumBytes: config[keyPath: field] = secret
            default: return false
            }
            return true
        }
    }

    /// A non-empty string without spaces, or null for none.
    static func optionalText(_ path: String, _ field: WritableKeyPath<ServerConfig, String?> & Sendable) -> Key {
        Key(path: path, expectation: "a non-empty string without spaces, or null") { config, value in
            switch value {
            case .null: config[keyPath: field] = nil
            case .string(let text) where !text.isEmpty && !text.contains(" "): config[keyPath: field] = text
            default: return false
            }
            return true
        }
    }

    /// An http:// or https:// URL (no trailing slash needed).
    static func url(_ path: String, _ field: WritableKeyPath<ServerConfig, String> & Sendable) -> Key {
        Key(path: path, expectation: "an http(s) URL") { config, value in
            guard let text = value.stringValue, isURL(text) else { return false }
            config[keyPath: field] = text.hasSuffix("/") ? String(text.dropLast()) : text
            return true
        }
    }

    static func isURL(_ text: String) -> Bool {
        (text.hasPrefix("https://") || text.hasPrefix("http://")) && !text.contains(" ")
    }

    /// A non-empty list of numbers of seconds, each in `range`.
    static func secondsList(_ value: JSONValue, _ range: ClosedRange<Double>) -> [Double]? {
        guard case .array(let items) = value else { return nil }
        let seconds = items.compactMap { item -> Double? in
            switch item {
            case .integer(let whole): return Double(whole)
            case .double(let fraction): return fraction
            default: return nil
            }
        }
        guard !seconds.isEmpty, seconds.count == items.count, seconds.allSatisfy(range.contains) else { return nil }
        return seconds
    }

    /// A path to a file, or null for none.
    static func optionalPath(_ path: String, _ field: WritableKeyPath<ServerConfig, String?> & Sendable) -> Key {
        Key(path: path, expectation: "a non-empty path, or null") { config, value in
            switch value {
            case .null: config[keyPath: field] = nil
            case .string(let text) where !text.isEmpty: config[keyPath: field] = text
            default: return false
            }
            return true
        }
    }
}
