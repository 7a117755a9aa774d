/// Writes the Prometheus text exposition format 0.0.4: each family once,
/// with `# HELP` and `# TYPE` before its samples.
struct PrometheusText {
    /// The `Content-Type` of a scrape.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    enum Kind: String {
        case counter, gauge, histogram
    }

    private(set) var text = ""

    /// Starts a family.
    mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        let escapedHelp = help.replacingAll("\\", with: "\\\\").replacingAll("\n", with: "\\n")
        text += "# HELP \(name) \(escapedHelp)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of the current family.
    mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: Double) {
        text += name + Self.labelText(labels) + " " + Self.format(value) + "\n"
    }

    /// A whole family holding one sample.
    mutating func single(_ name: String, _ kind: Kind, _ help: String, _ value: Double) {
        family(name, kind, help)
        sample(name, [], value)
    }

    /// One histogram's buckets (cumulative, ending with `+Inf`), sum and count.
    mutating func histogram(
        _ name: String, _ labels: [(String, String)] = [], bounds: [Double],
        _ snapshot: Histogram.Snapshot
    ) {
        var cumulative = 0
        for (index, count) in snapshot.counts.enumerated() {
            cumulative += count
            let bound = index < bounds.count ? Self.format(bounds[index]) : "+Inf"
            sample(name + "_bucket", labels + [("le", bound)], Double(cumulative))
        }
        sample(name + "_sum", labels, snapshot.sum)
        sample(name + "_count", labels, Double(cumulative))
    }

    static func labelText(_ labels: [(String, String)]) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.map { name, value in
            let escaped = value.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"")
                .replacingAll("\n", with: "\\n")
            return "\(name)=\"\(escaped)\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    /// Whole numbers without a fraction (counts stay exact and readable).
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension String {
    /// Every `target` replaced by `replacement`.
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}
