import Foundation
import SignalProtocol
import TestSupport
import Testing

@testable import SignalCore
@testable import SignalServer

/// docs/STATES.md is `ringd states` as of now, and both formats of the
/// table say the same: the Markdown legend names every input, the JSON has
/// one object per row with the same keys.
@Suite struct StateTableDocumentTests {
    static let document = Repository.root() + "/docs/STATES.md"

    @Test func theDocumentIsTheGeneratorsOutput() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let generated = try StateTable.render(.markdown)
        guard text != generated else { return }
        // The first line that differs, not both documents in full.
        let documented = text.split(separator: "\n", omittingEmptySubsequences: false)
        let current = generated.split(separator: "\n", omittingEmptySubsequences: false)
        let line =
            zip(documented, current).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(documented.count, current.count)
        let has = line < documented.count ? "\"\(documented[line])\"" : "nothing"
        let prints = line < current.count ? "\"\(current[line])\"" : "nothing"
        Issue.record(
            """
            docs/STATES.md is stale: line \(line + 1) is \(has), ringd states prints \(prints). Regenerate it with \
            `make states` (or `swift run ringd states > docs/STATES.md`).
            """)
    }

    @Test func theJSONHasOneObjectPerRowWithTheSameKeys() throws {
        let rows = try StateTable.rows(settings: StateTable.shippedSettings)
        guard case .array(let objects) = try JSONValue.parse(StateTable.render(.json)) else {
            Issue.record("ringd states --format json is not an array")
            return
        }
        #expect(objects.count == rows.count)
        let keys = ["state", "input", "actor", "next", "newCall", "reply", "events", "timers", "push"]
        for (object, row) in zip(objects, rows) {
            #expect(object.objectMembers?.map(\.key) == keys)
            #expect(object["state"] == .string(row.state?.rawValue ?? "none"))
            #expect(object["input"] == .string(row.input))
            #expect(object["actor"] == .string(row.actor.rawValue))
            #expect(object["next"] == .string(row.next?.rawValue ?? "none"))
            #expect(object["events"] == .array(row.events.map(JSONValue.string)))
            let replyKeys = object["reply"]?.objectMembers?.map(\.key)
            #expect(
                row.reply == nil
                    ? object["reply"] == .null
                    : replyKeys == ["ok", "call", "ringing", "otherCall", "error", "fromStore"])
        }
    }

    @Test func theLegendNamesEveryInput() throws {
        let markdown = try StateTable.render(.markdown)
        for input in StateTableInput.all {
            let summary = try #require(StateTableInput.summaries[input.name], "no summary for \(input.name)")
            #expect(markdown.contains("| `\(input.name)` | \(summary) |"))
        }
        #expect(Set(StateTableInput.summaries.keys) == Set(StateTableInput.all.map(\.name)), "a summary of no input")
    }

    /// A new request type must be added to the table or to what it says it leaves out.
    @Test func everyRequestTypeIsInTheTableOrNamedAsLeftOut() throws {
        let inTable = Set(
            StateTableInput.all.compactMap { input in
                RequestType(rawValue: String(input.name.prefix { $0.isLetter }))
            })
        let leftOut: Set<RequestType> = [
            .getCallLogs, .registerPushToken, .unregisterPushToken, .getIceServers, .getMediaToken, .setDoNotDisturb,
        ]
        #expect(inTable.union(leftOut) == Set(RequestType.allCases))
        #expect(inTable.isDisjoint(with: leftOut))
        let markdown = try StateTable.render(.markdown)
        for type in leftOut {
            #expect(
                markdown.contains("`\(type.rawValue)`"), "docs/STATES.md does not say it leaves out \(type.rawValue)")
        }
    }
}
