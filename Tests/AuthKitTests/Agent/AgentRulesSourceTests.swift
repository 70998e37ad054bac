import Foundation
import Logging
import Testing

@testable import AuthKit

/// The groups' rules from the config file: read when it changes; a file that cannot be used
/// keeps the rules last read, and before any were read leaves them unknown (nothing served).
@Suite struct AgentRulesSourceTests {
    @Test("unusable before any read: unknown; read: the rules; unusable after: the rules kept")
    func unusableFileBeforeAndAfterARead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("config").path
        func write(_ text: String) throws {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(chmod(path, 0o600) == 0)
        }
        var source = AgentRulesSource(environment: ["AUTHKIT_CONFIG": path])
        let logger = Logger(label: "test")
        try write("[group \"g\"]\nconfirm = always\n[nonsense]\n")
        #expect(source.reloadIfChanged(logger: logger) == .unusable)
        Thread.sleep(forTimeInterval: 1.05)
        // Fixed by what authkit's own message says, `chmod go-w`, which changes neither the
        // file's size nor its modification time: read again all the same.
        try write("[group \"g\"]\nconfirm = once\n")
        #expect(chmod(path, 0o666) == 0)
        #expect(source.reloadIfChanged(logger: logger) == .unusable)
        Thread.sleep(forTimeInterval: 1.05)
        #expect(chmod(path, 0o600) == 0)
        #expect(source.reloadIfChanged(logger: logger) == .rules(["g": AgentGroupRule(confirm: .once)]))
        Thread.sleep(forTimeInterval: 1.05)
        try write("[group \"g\"]\nconfirm = always\n")
        #expect(source.reloadIfChanged(logger: logger) == .rules(["g": AgentGroupRule(confirm: .always)]))
        Thread.sleep(forTimeInterval: 1.05)
        try write("[group \"g\"]\nconfirm = never\n[nonsense again]\n")
        #expect(source.reloadIfChanged(logger: logger) == nil, "the rules last read stay")
    }
}
