import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp (mkdtemp), for stores, certificates and
/// sockets of one test; ``remove()`` deletes it with everything in it.
public struct TemporaryDirectory: Sendable, CustomStringConvertible {
    /// The directory's absolute path.
    public let path: String

    /// Creates `/tmp/<prefix>-XXXXXX`.
    public init(prefix: String = "ringd-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TemporaryDirectoryError(description: "mkdtemp failed: errno \(errno)")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The path of `name` in the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `name` readable by its owner only (mode 0600, as ringd
    /// wants key files); returns the path.
    @discardableResult
    public func writeSecret(_ text: String, named name: String) throws -> String {
        let path = file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        return path
    }

    /// Whether `name` exists in the directory.
    public func contains(_ name: String) -> Bool { FileManager.default.fileExists(atPath: file(name)) }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }

    public var description: String { path }
}

/// `mkdtemp` failed.
public struct TemporaryDirectoryError: Error, CustomStringConvertible {
    public let description: String
}
