import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// No hang on a file a person names. A FIFO (which blocks until a writer comes), a
/// device that never ends, or a directory, given as AUTHKIT_CONFIG or `jwt verify --jwks`:
/// refused at once with a clear line, never a wait or an unbounded read.
@Suite struct FileInputTests {
    static func fifo() throws -> (URL, String) {
        let directory = try TestPaths.makeTemporaryDirectory()
        let path = directory.appendingPathComponent("fifo").path
        try #require(mkfifo(path, 0o600) == 0)
        return (directory, path)
    }

    @Test(arguments: ["fifo", "/dev/zero", "/tmp"])
    func aConfigThatIsNotARegularFileIsRefusedAtOnce(kind: String) async throws {
        let (directory, fifo) = try Self.fifo()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = kind == "fifo" ? fifo : kind
        // A hang shows as the 20 s bound running out (a FIFO's open would block for ever);
        // the time itself is not measured here (the full suite loads two cores).
        let result = try await ProcessRunner.run(
            TestPaths.product("authkit"), ["status"], environment: ["AUTHKIT_CONFIG": path, "HOME": directory.path], timeout: 20)
        #expect(!result.timedOut, "authkit hung on \(path)")
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("not a regular file"), "\(result.stderr)")
    }

    @Test(arguments: ["fifo", "/dev/zero"])
    func aJWKSetThatIsNotARegularFileIsRefusedAtOnce(kind: String) async throws {
        let (directory, fifo) = try Self.fifo()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = kind == "fifo" ? fifo : kind
        let result = try await ProcessRunner.run(
            TestPaths.product("authkit"), ["jwt", "verify", "--signature-only", "--jwks", path, "a.b.c"],
            environment: ["HOME": directory.path], timeout: 20)
        #expect(!result.timedOut, "authkit hung on \(path)")
        #expect(result.status == 2, "\(result.status): \(result.stderr)")
        #expect(result.stderr.contains("not a regular file"), "\(result.stderr)")
    }
}
