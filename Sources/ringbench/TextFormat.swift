/// Number formatting and column padding for the reports' tables and JSON.
enum TextFormat {
    /// `value` with exactly `digits` decimals (no locale, no exponent).
    static func number(_ value: Double, digits: Int = 1) -> String {
        var scale = 1.0
        for _ in 0 ..< digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        let whole = Int(rounded)
        guard digits > 0 else { return "\(whole)" }
        let fraction = Int(((rounded - Double(whole)) * scale).rounded().magnitude)
        let text = String(fraction)
        let sign = rounded < 0 && whole == 0 ? "-" : ""
        return "\(sign)\(whole)." + String(repeating: "0", count: digits - text.count) + text
    }

    /// `text` padded with spaces to `width`: on the left (right-aligned) unless `left`.
    static func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return left ? text + padding : padding + text
    }

    /// A table row: the first cell left-aligned in `widths[0]`, the others right-aligned.
    static func row(_ cells: [String], _ widths: [Int]) -> String {
        zip(cells, widths).enumerated().map { index, cell in
            pad(cell.0, cell.1, left: index == 0)
        }.joined(separator: " ")
    }
}
