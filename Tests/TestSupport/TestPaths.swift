import Foundation

/// Where the package, its fixtures and its built products are, for tests.
public enum TestPaths {
    /// The package root (the folder holding Package.swift).
    public static let packageRoot: URL = {
        // Tests/TestSupport/TestPaths.swift → package root
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
    }()

    /// `Fixtures/` at the package root.
    public static let fixtures = packageRoot.appendingPathComponent("Fixtures", isDirectory: true)

    /// A file under `Fixtures/`, e.g. `fixture("wycheproof/ed25519_test.json")`.
    public static func fixture(_ relativePath: String) -> URL {
        fixtures.appendingPathComponent(relativePath)
    }

    /// The folder holding the built products (`authkit`, `SecretStoreProbe`, …): the folder of
    /// the running test binary, unless `AUTHKIT_BUILD_DIR` names another.
    public static let productsDirectory: URL = {
        if let override = ProcessInfo.processInfo.environment["AUTHKIT_BUILD_DIR"], !override.isEmpty {
            return URL(fileURLWithPath: override, isDirectory: true)
        }
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // swift-testing / XCTest bundles on Linux live directly in the products folder, but be
        // tolerant of a `.xctest` directory layout.
        while url.pathExtension == "xctest" { url.deleteLastPathComponent() }
        return url
    }()

    /// A built executable product, e.g. `product("authkit")`.
    public static func product(_ name: String) -> URL {
        productsDirectory.appendingPathComponent(name)
    }

    /// The Python interpreter of the test peers' virtual environment (made by `scripts/bootstrap`).
    public static let python: URL = {
        if let override = ProcessInfo.processInfo.environment["AUTHKIT_TEST_PYTHON"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        return packageRoot.appendingPathComponent(".venv/bin/python")
    }()

    /// A fresh private temporary directory (mode 0700), removed by the caller when done.
    public static func makeTemporaryDirectory(prefix: String = "authkit-test") throws -> URL {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        return url
    }
}
