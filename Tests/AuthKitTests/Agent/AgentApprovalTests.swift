import Testing

@testable import AuthKit

/// Who may have a token and the record of who got one, without sockets: a group's `allow`
/// list, `confirm = always | once`, an agent with no way to ask, the audit log and its bounds.
@Suite("AgentStateMachine approval and audit log")
struct AgentApprovalTests {
    typealias Machine = AgentStateMachine
    static let now = AgentStateMachineTests.now
    static let request = Array(#"{"v":1,"op":"token","group":"g","storage":"kernel-keyring"}"#.utf8)
    static let key = Machine.Key(storage: .kernelKeyring, group: "g", account: nil, scopes: [], idToken: false)

    static func asker(_ pid: Int32, executable: String = "/usr/bin/git", session: String = "1@1") -> AgentAsker {
        let name = String(executable.split(separator: "/").last ?? "")
        return AgentAsker(
            chain: [
                .init(
                    pid: pid + 1, name: "authkit", executable: "/usr/bin/authkit", commandLine: "authkit credential git", isAuthkit: true),
                .init(pid: pid, name: name, executable: executable, commandLine: "\(name) fetch"),
                .init(pid: 1, name: "bash", executable: "/usr/bin/bash", commandLine: "-bash"),
            ], session: session)
    }

    static func machine(_ rule: AgentGroupRule) -> Machine {
        var machine = Machine(policy: .owner, pid: 1)
        machine.rules = ["g": rule]
        return machine
    }

    @Test("allow: a listed name matches only the system's program of that name; a path matches that file; exec's program counts")
    func allowList() {
        var machine = Self.machine(AgentGroupRule(allow: ["git", "/usr/bin/curl"]))
        machine.opened(1, asker: Self.asker(10))
        #expect(machine.receiveActions(Self.request, from: 1, now: Self.now) == [.fetch(Self.key, minTTL: 60)])
        machine.opened(2, asker: Self.asker(20, executable: "/home/ada/bin/git"))
        let refused = machine.receive(Self.request, from: 2, now: Self.now)
        guard case .reply(2, let response) = refused.first else {
            Issue.record("no refusal: \(refused)")
            return
        }
        #expect(response.error?.code == .refused && response.error?.message.contains("allow list") == true)
        #expect(machine.log.events(after: 0, limit: 10).last?.kind == .refused)
        // `authkit exec -- curl`: authkit asks for the program it runs.
        machine.opened(
            3,
            asker: AgentAsker(chain: [
                .init(pid: 30, name: "authkit", executable: "/x/authkit", commandLine: "authkit exec", isAuthkit: true)
            ]))
        let exec = Array(#"{"v":1,"op":"token","group":"g","storage":"kernel-keyring","program":"/usr/bin/curl"}"#.utf8)
        #expect(machine.receiveActions(exec, from: 3, now: Self.now).isEmpty, "joins the fetch under way")
        let env = Array(#"{"v":1,"op":"token","group":"g","storage":"kernel-keyring","program":"/usr/bin/env"}"#.utf8)
        #expect(machine.receiveActions(env, from: 3, now: Self.now).first?.isRefusal == true)
    }

    @Test("a config file that cannot be used before any rules were read: nothing is served, and it says why where")
    func unknownRules() {
        var machine = Self.machine(AgentGroupRule())
        machine.rulesUnknown = true
        machine.opened(1, asker: Self.asker(10))
        let refused = machine.receive(Self.request, from: 1, now: Self.now)
        guard case .reply(1, let response) = refused.first else {
            Issue.record("no refusal: \(refused)")
            return
        }
        #expect(response.error?.category == .configuration && response.error?.message.contains("config file") == true)
        #expect(machine.log.events(after: 0, limit: 10).last?.kind == .refused)
        machine.rulesUnknown = false
        machine.opened(2, asker: Self.asker(11))
        #expect(machine.receiveActions(Self.request, from: 2, now: Self.now) == [.fetch(Self.key, minTTL: 60)])
    }

    @Test("confirm = once: a yes lasts for the asker's session and confirm_for; another session or a later request asks again")
    func once() {
        var machine = Self.machine(AgentGroupRule(confirm: .once, confirmFor: 600))
        var now = Self.now
        machine.opened(1, asker: Self.asker(10))
        let asked = machine.receive(Self.request, from: 1, now: now)
        guard case .confirm(1, "g", false, let question, _) = asked.first else {
            Issue.record("no question: \(asked)")
            return
        }
        #expect(question.hasPrefix("git (pid 10) ← bash"), "the question names the program, not authkit: \(question)")
        #expect(machine.confirmedActions(1, allowed: true, now: now) == [.fetch(Self.key, minTTL: 60)])
        _ = machine.fetched(Self.key, .success(AgentStateMachineTests.token()), now: now)
        machine.opened(2, asker: Self.asker(11))
        #expect(machine.receiveActions(Self.request, from: 2, now: now) == [.fetch(Self.key, minTTL: 60)], "same session: no question")
        machine.opened(3, asker: Self.asker(12, session: "2@2"))
        #expect(machine.receiveActions(Self.request, from: 3, now: now).first?.isQuestion == true, "another session asks")
        now.monotonic += 601
        machine.opened(4, asker: Self.asker(13))
        #expect(machine.receiveActions(Self.request, from: 4, now: now).first?.isQuestion == true, "after confirm_for it asks again")
    }

    @Test("confirm = always asks on every connection; with nobody to ask the answer is no, with the reason, never a silent yes")
    func always() {
        var machine = Self.machine(AgentGroupRule(confirm: .always))
        machine.opened(1, asker: Self.asker(10))
        #expect(machine.receiveActions(Self.request, from: 1, now: Self.now).first?.isQuestion == true)
        let refused = machine.confirmed(1, allowed: false, reason: "nobody could be asked", now: Self.now)
        guard case .reply(1, let response) = refused.first else {
            Issue.record("no refusal")
            return
        }
        #expect(response.error?.message == "nobody could be asked")
        #expect(refused.last == .close(1))
        machine.opened(2, asker: Self.asker(11))
        #expect(machine.receiveActions(Self.request, from: 2, now: Self.now).first?.isQuestion == true)
    }

    @Test("the log names the asker, never the token; log and stats answer on the owner's socket only")
    func logAndStats() throws {
        var machine = Machine(policy: .owner, pid: 1)
        machine.opened(1, asker: Self.asker(10))
        _ = machine.receive(Self.request, from: 1, now: Self.now)
        let served = machine.fetched(Self.key, .success(AgentStateMachineTests.token("secret-access-token")), now: Self.now)
        guard case .journal(let event) = served.last else {
            Issue.record("no event: \(served)")
            return
        }
        #expect(event.kind == .served && event.group == "g" && event.pid == 10 && event.asker?.contains("git (pid 10)") == true)
        #expect(!String(decoding: AgentMessage.encode(event), as: UTF8.self).contains("secret-access-token"))
        let log = machine.receiveActions(Array(#"{"v":1,"op":"log","since":0}"#.utf8), from: 1, now: Self.now)
        guard case .reply(_, let answer) = log.first else {
            Issue.record("no answer")
            return
        }
        #expect(answer.events?.map(\.kind) == [.served])
        let stats = machine.receiveActions(Array(#"{"v":1,"op":"stats"}"#.utf8), from: 1, now: Self.now)
        guard case .reply(_, let counts) = stats.first else {
            Issue.record("no answer")
            return
        }
        #expect(counts.counts?["g"]?.served == 1)
        var forward = Machine(policy: .restricted(groups: ["g": .kernelKeyring], extraScopes: [], idTokens: false), pid: 1)
        #expect(forward.receiveActions(Array(#"{"v":1,"op":"log"}"#.utf8), from: 1, now: Self.now).first?.isRefusal == true)
    }

    @Test("a forward's start and end are logged with the forward and the groups it serves")
    func forwardOpenedAndClosed() throws {
        var forward = Machine(
            policy: .restricted(groups: ["g": .kernelKeyring, "a": .secretService], extraScopes: [], idTokens: false), pid: 1)
        let opened = forward.forwardEvent(.opened, via: "ssh to build-box", now: Self.now)
        let closed = forward.forwardEvent(.closed, via: "ssh to build-box", now: Self.now)
        guard case .journal(let first) = opened, case .journal(let last) = closed else {
            Issue.record("no events: \(opened) \(closed)")
            return
        }
        #expect(first.kind == .opened && first.via == "ssh to build-box" && first.group == "a g")
        #expect(last.kind == .closed && last.sequence == first.sequence + 1)
        #expect(AgentCore.message(first) == "forward ssh to build-box opened (groups: a g)")
        #expect(forward.log.events(after: 0, limit: 10).map(\.kind) == [.opened, .closed])
    }

    @Test("a hundred thousand requests keep the log and the machine bounded")
    func bounded() {
        var machine = Machine(policy: .restricted(groups: ["g": .kernelKeyring], extraScopes: [], idTokens: false), pid: 1)
        for index in 0..<100_000 {
            let connection = index % 64
            machine.opened(connection, asker: Self.asker(Int32(10 + connection)))
            let line = Array(#"{"v":1,"op":"token","group":"other-\#(index)-\#(String(repeating: "x", count: 500))"}"#.utf8)
            _ = machine.receive(line, from: connection, now: Self.now)
            machine.closed(connection)
        }
        #expect(machine.log.count == AgentAuditLog.capacity)
        #expect(machine.footprint == 0)
        #expect(machine.log.events(after: 0, limit: 1).first.map { ($0.reason?.count ?? 0) <= 301 } == true)
    }
}

extension AgentStateMachine.Action {
    var isQuestion: Bool {
        if case .confirm = self { return true }
        return false
    }

    var isReply: Bool {
        if case .reply(_, let response) = self { return response.ok }
        return false
    }

    var isRefusal: Bool {
        if case .reply(_, let response) = self { return response.error?.code == .refused }
        return false
    }
}
