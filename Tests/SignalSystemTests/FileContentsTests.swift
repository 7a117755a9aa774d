import SignalSystem
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.blocking) struct FileContentsTests {
    @Test func readsAWholeFileLargerThanOneChunk() throws {
        var template = Array("/tmp/ringd-file-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        try #require(fd >= 0)
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let bytes = (0 ..< 10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
        closeDescriptor(fd)
        #expect(FileContents.read(path) == bytes)
    }

    @Test func aMissingFileIsNil() {
        #expect(FileContents.read("/nonexistent/ringd/file") == nil)
    }

    @Test func aDirectoryCannotBeRead() {
        #expect(FileContents.read("/tmp") == nil)
    }
}
