import Foundation
import TestSupport
import Testing
@testable import AuthKit

#if canImport(Glibc)
import Glibc
#endif

/// Where a group's sign-in lives when it is not the Secret Service: recorded, forgotten, and
/// trusted only in a folder and file of the user's own that nobody else can write.
@Suite struct StorageRecordTests {
    func withState(_ body: ([String: String], String) throws -> Void) throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-record")
        defer { try? FileManager.default.removeItem(at: root) }
        let environment = ["XDG_STATE_HOME": root.path + "/state"]
        try body(environment, root.path + "/state/authkit")
    }

    @Test func recordsForgetsAndKeepsOtherGroups() throws {
        try withState { environment, folder in
            try StorageRecord.record(.kernelKeyring, for: "com.example.a", environment: environment)
            try StorageRecord.record(.plainFile, for: "com.example.b", environment: environment)
            #expect(StorageRecord.choice(for: "com.example.a", environment: environment) == .kernelKeyring)
            #expect(StorageRecord.choice(for: "com.example.b", environment: environment) == .plainFile)
            #expect(
                try String(contentsOfFile: folder + "/storage", encoding: .utf8)
                    == "com.example.a kernel-keyring\ncom.example.b plain-file\n")
            var info = stat()
            #expect(stat(folder + "/storage", &info) == 0 && info.st_mode & 0o777 == 0o600)
            // The Secret Service is the default: recording it removes the line.
            try StorageRecord.record(.secretService, for: "com.example.a", environment: environment)
            #expect(StorageRecord.choice(for: "com.example.a", environment: environment) == nil)
            // forget only when the line names that store.
            try StorageRecord.forget("com.example.b", storedIn: .kernelKeyring, environment: environment)
            #expect(StorageRecord.choice(for: "com.example.b", environment: environment) == .plainFile)
            try StorageRecord.forget("com.example.b", storedIn: .plainFile, environment: environment)
            #expect(StorageRecord.choice(for: "com.example.b", environment: environment) == nil)
        }
    }

    @Test func concurrentRecordsLoseNoLine() async throws {
        let root = try TestPaths.makeTemporaryDirectory(prefix: "authkit-record")
        defer { try? FileManager.default.removeItem(at: root) }
        let environment = ["XDG_STATE_HOME": root.path + "/state"]
        await withTaskGroup(of: Void.self) { tasks in
            for index in 0..<24 {
                tasks.addTask { try? StorageRecord.record(.kernelKeyring, for: "com.example.g\(index)", environment: environment) }
            }
        }
        let entries = StorageRecord.entries(StorageRecord.path(environment: environment))
        #expect(entries.count == 24, "\(entries.keys.sorted())")
    }

    @Test func aFolderOrFileOthersCanWriteIsNotTrusted() throws {
        try withState { environment, folder in
            try StorageRecord.record(.kernelKeyring, for: "com.example.a", environment: environment)
            chmod(folder + "/storage", 0o666)
            #expect(StorageRecord.choice(for: "com.example.a", environment: environment) == nil, "a file others can write")
            chmod(folder + "/storage", 0o600)
            chmod(folder, 0o777)
            #expect(StorageRecord.choice(for: "com.example.a", environment: environment) == nil, "a folder others can write")
            #expect(throws: StorageRecord.Failure.self) {
                try StorageRecord.record(.plainFile, for: "com.example.b", environment: environment)
            }
            chmod(folder, 0o700)
            // Garbage lines are skipped, the good one still read.
            try Data("garbage\n com.example.x plain-file\ncom.example.a kernel-keyring\nbad/group kernel-keyring\n".utf8)
                .write(to: URL(fileURLWithPath: folder + "/storage"))
            chmod(folder + "/storage", 0o600)
            #expect(StorageRecord.entries(folder + "/storage") == ["com.example.a": .kernelKeyring])
        }
    }
}
