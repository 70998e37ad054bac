import AuthKitCore
import Foundation
import Testing

/// `LeanTokenPlan+Exec` and `ExecRules` (Sources/AuthKitCore): `exec` is planned only for the
/// shared options and `--env` before `--`, a command after it and a variable authkit takes.
@Suite struct LeanExecPlanTests {
    static func plan(_ arguments: [String], program: String = "authkit", _ extra: [String: String] = [:]) -> LeanTokenPlan {
        LeanTokenPlan.make(
            arguments: arguments, program: program, environment: LeanTokenPlanTests.home.merging(extra) { _, new in new },
            configuration: { _ in LeanTokenPlanTests.file(false) }, storageRecord: { _ in [:] })
    }

    static func exec(
        _ command: [String], variable: String = "AUTHKIT_TOKEN", group: String = "authkit", account: String? = nil, scopes: [String] = [],
        minTTL: Int = 300
    ) -> LeanTokenPlan {
        .exec(
            AgentTokenQuery(group: group, storage: "secret-service", account: account, scopes: scopes, resources: [], minTTL: minTTL),
            socket: LeanTokenPlanTests.socket, variable: variable, command: command)
    }

    @Test func execIsPlannedForWhatAuthkitWouldRun() {
        #expect(Self.plan(["exec", "--", "curl", "-s", "--", "x"]) == Self.exec(["curl", "-s", "--", "x"]))
        #expect(Self.plan(["exec", "--", "curl"], program: "authkit-lean") == Self.exec(["curl"]))
        #expect(
            Self.plan(["exec", "--env", "GH_TOKEN", "--group", "g", "--account=ada", "--scope", "s", "--min-ttl", "60", "--", "gh"])
                == Self.exec(["gh"], variable: "GH_TOKEN", group: "g", account: "ada", scopes: ["s"], minTTL: 60))
        #expect(Self.plan(["exec", "--env=X", "--", "gh"]) == Self.exec(["gh"], variable: "X"))
        #expect(Self.plan(["exec", "--", "gh"], ["AUTHKIT_ACCOUNT": "bob"]) == Self.exec(["gh"], account: "bob"))
        #expect(Self.plan(["exec", "--env", "AUTHKIT_TOKEN", "--", "gh"]) == Self.exec(["gh"]))
        // (A repeated --min-ttl: the last, as ArgumentParser takes it.)
        #expect(Self.plan(["exec", "--min-ttl", "90", "--min-ttl", "60", "--", "x"]) == Self.exec(["x"], minTTL: 60))
        for arguments in [
            ["exec", "curl"], ["exec", "--"], ["exec", "--", ""], ["exec", "--", "--", "curl"], ["exec", "--", "cürl"],
            ["exec", "--", "a b"], ["exec", "--env", "LD_PRELOAD", "--", "x"], ["exec", "--env", "AUTHKIT_GROUP", "--", "x"],
            ["exec", "--env", "9X", "--", "x"], ["exec", "--env", "A", "--env", "B", "--", "x"], ["exec", "--env", "--", "x"],
            ["exec", "--bogus", "--", "x"], ["exec", "--help", "--", "x"], ["exec", "x", "--", "y"],
            ["exec", "--min-ttl", "-1", "--", "x"],
            ["exec", "--env=", "--", "x"],
        ] {
            #expect(Self.plan(arguments) == .handOff, "\(arguments)")
        }
        // Under a plug-in's name authkit reads no `exec`; a variable authkit is to read is its.
        #expect(Self.plan(["exec", "--", "x"], program: "git-credential-authkit") == .handOff)
        for variable in LeanTokenPlan.handedOffVariables {
            #expect(Self.plan(["exec", "--", "x"], [variable: "v"]) == .handOff, "\(variable)")
        }
    }

    @Test func theVariableAndProgramRulesAreAuthkits() throws {
        for name in ["AUTHKIT_TOKEN", "GH_TOKEN", "_x", "a1"] {
            #expect(ExecRules.isVariableName(name) && ExecRules.refusedVariable(name) == nil, "\(name)")
        }
        for name in ["", "1a", "A-B", "A B", "Ä"] { #expect(!ExecRules.isVariableName(name), "\(name)") }
        for name in ["LD_PRELOAD", "PATH", "AUTHKIT_GROUP", "https_proxy", "HTTPS_PROXY", "LC_ALL", "GIT_ASKPASS", "PYTHONPATH"] {
            #expect(ExecRules.refusedVariable(name) != nil, "\(name)")
        }
        #expect(ExecRules.programPath("sh", path: "/nonexistent::/bin") == "/bin/sh")
        #expect(ExecRules.programPath("no-such-program-here", path: "/bin") == "no-such-program-here")
        #expect(ExecRules.programPath("./x", path: "/bin") == "./x" && ExecRules.programPath("", path: nil) == nil)
        // A folder or a file that cannot run does not hide a program later on PATH; alone, it is
        // what is named (and exec says 126, as a shell does).
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("exec-rules-\(getpid())")
        defer { try? FileManager.default.removeItem(at: root) }
        let (a, b, c) = (root.appendingPathComponent("a"), root.appendingPathComponent("b"), root.appendingPathComponent("c"))
        try FileManager.default.createDirectory(at: a.appendingPathComponent("prog"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: b, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: c, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: b.path + "/prog", contents: Data("x".utf8), attributes: [.posixPermissions: 0o644])
        FileManager.default.createFile(atPath: c.path + "/prog", contents: Data("x".utf8), attributes: [.posixPermissions: 0o755])
        #expect(ExecRules.programPath("prog", path: "\(a.path):\(b.path):\(c.path)") == c.path + "/prog")
        #expect(ExecRules.programPath("prog", path: "\(b.path):\(a.path)") == b.path + "/prog")
    }
}
