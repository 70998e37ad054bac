import Foundation

/// The built `authkit` command, run as a person or a script would run it: the one way tests
/// that need no world of their own start it (``CLIHarness`` adds a keyring, a provider and the
/// leak scan on top).
public enum Authkit {
    /// The executable next to the test bundle; a missing one is an error that says how to build it.
    public static func executable() throws -> URL {
        let url = TestPaths.product("authkit")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw MissingProgram(path: url.path)
        }
        return url
    }

    /// Runs `authkit ARGUMENTS` with exactly `environment` (none of the test process's own) and
    /// waits at most `timeout` seconds.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 30
    ) throws -> ProcessResult {
        try ProcessRunner.run(try executable(), arguments, environment: environment, stdin: stdin, timeout: timeout)
    }

    /// As ``run(_:environment:stdin:timeout:)``, off the cooperative pool.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil, timeout: TimeInterval = 30
    ) async throws -> ProcessResult {
        try await offThePool { try run(arguments, environment: environment, stdin: stdin, timeout: timeout) }
    }

    public struct MissingProgram: Error, CustomStringConvertible {
        public var path: String
        public var description: String { "\(path) is missing: build it first (swift build --build-tests), or run ./scripts/test" }
    }
}
