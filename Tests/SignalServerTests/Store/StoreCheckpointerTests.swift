import TestSupport
import Testing

@testable import SignalServer

/// What the writer's commit hook is told to do as the log grows.
@Suite(.blocking) struct StoreCheckpointerOutcomeTests {
    @Test func theCatchUpWaitsForARunningPassOnceTheLogIsAtItsLimit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try CallStore(path: directory.databasePath)
        store.close()
        let checkpointer = try StoreCheckpointer(path: directory.databasePath)
        defer { checkpointer.stop() }
        let step = StoreCheckpointer.thresholdFrames
        #expect(checkpointer.walCommitted(frames: StoreCheckpointer.catchUpFrames - 1) == .proceed)
        #expect(checkpointer.walCommitted(frames: StoreCheckpointer.catchUpFrames) == .catchUp)
        #expect(
            checkpointer.walCommitted(frames: StoreCheckpointer.catchUpFrames + 1) == .proceed,
            "at most one catch-up per threshold of growth")
        #expect(checkpointer.walCommitted(frames: StoreCheckpointer.limitFrames) == .catchUpAfterPass)
        #expect(checkpointer.walCommitted(frames: StoreCheckpointer.limitFrames + step) == .catchUpAfterPass)
        checkpointer.waitForRunningPass()
    }
}
