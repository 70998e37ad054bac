import Foundation
import Synchronization
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

// The refresh race, and SIGKILL while holding the lock, with whole processes:
// `authkit token` (the built product) in a private D-Bus session with a real gnome-keyring
// (PrivateSecretService; its XDG_STATE_HOME is private, so the refresh lock is too), against
// our authlib provider, whose request log counts the refreshes. The sign-in they share is made
// by `authkit login` with the scripted browser as $BROWSER: the real Secret Service path.

/// Runs `body` for 0..<count on as many threads at once (child processes are waited for
/// synchronously, so the cooperative pool must not carry them).
private func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
    await withCheckedContinuation { continuation in
        let results = Mutex<[Int: T]>([:])
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                let value = body(index)
                results.withLock { $0[index] = value }
                group.leave()
            }
        }
        group.notify(queue: .global()) {
            let all = results.withLock { $0 }
            continuation.resume(returning: (0..<count).compactMap { all[$0] })
        }
    }
}

/// True while another process holds the flock on `path`.
private func isLocked(_ path: String) -> Bool {
    let fd = open(path, O_RDWR | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    if flock(fd, LOCK_EX | LOCK_NB) == 0 {
        flock(fd, LOCK_UN)
        return false
    }
    return errno == EWOULDBLOCK
}

// One at a time: each starts a keyring and many processes, and they measure contention themselves.
@Suite("Refresh race across processes (authkit token, private keyring)", .serialized)
struct RefreshRaceTests {
    @Test("authkit login through the real Secret Service stores the sign-in; authkit token reads it back without a request")
    func loginThroughSecretService() async throws {
        let signIn = try await KeyringSignIn(stale: false)
        let issued = try await signIn.issuedAccessTokens()
        try #require(issued.count == 1)
        let status = try await signIn.exec(["status", "--group", signIn.group, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("ada@example.test"))
        try await signIn.provider.clearLog()
        let token = try await signIn.execToken()
        #expect(token.status == 0, "\(token.stderr)")
        #expect(token.stdout == (issued[0]["value"].string ?? "-") + "\n")
        #expect(try await signIn.provider.log().total == 0, "a live token comes from the keyring alone")
        try await signIn.expectNoSecretsLeaked()
    }

    @Test("16 processes asking for a token after it expired cause exactly ONE refresh at the provider, and all get the token it issued")
    func sixteenProcessesOneRefresh() async throws {
        let signIn = try await KeyringSignIn()
        try await signIn.provider.clearLog()
        // Keep the one refresh in flight long enough for all 16 to arrive while it runs.
        try await signIn.provider.setFault(.delay("token", milliseconds: 1500))
        let launched = Mutex<[Date]>([])
        let results = try await onThreads(16) { _ in
            launched.withLock { $0.append(Date()) }
            return Result { try signIn.token() }
        }.map { try $0.get() }
        for result in results {
            #expect(result.status == 0, "authkit token: \(result.stderr)")
            #expect(result.stderr.isEmpty, "\(result.stderr)")
        }
        let log = try await signIn.provider.log()
        #expect(log.count(grantType: "refresh_token") == 1, "refreshes at the provider: \(log.count(grantType: "refresh_token"))")
        #expect(log.count(endpoint: "token") == 1)

        let tokens = Set(results.map { $0.stdout })
        #expect(tokens.count == 1, "all 16 printed the same token")
        let issued = try await signIn.issuedAccessTokens()
        let newest = try #require(issued.last?["value"].string)
        #expect(tokens.first == newest + "\n", "the token the provider issued last")
        #expect(issued.last?["active"].bool != false)

        // They really raced: every process was started before the one refresh finished.
        let refresh = try #require(log.requests.first { $0["grant_type"] == "refresh_token" })
        if case .number(let at) = refresh["at"], case .number(let ms) = refresh["ms"] {
            let finished = Date(timeIntervalSince1970: at + ms / 1000)
            #expect(launched.withLock { $0 }.allSatisfy { $0 < finished }, "a process started after the refresh finished")
        } else {
            Issue.record("the provider's log lacks at/ms")
        }
        try await signIn.expectNoSecretsLeaked()
    }

    @Test("16 processes asking for the same narrow token (a resource) cause exactly ONE refresh, and all get it")
    func sixteenProcessesOneNarrowRefresh() async throws {
        var options = OIDCTestProvider.Options()
        options.resources = ["https://api.example.test/"]
        options.jwtAccessTokens = true
        let signIn = try await KeyringSignIn(stale: false, options: options)
        try await signIn.provider.clearLog()
        try await signIn.provider.setFault(.delay("token", milliseconds: 1500))
        let results = try await onThreads(16) { _ in Result { try signIn.token(["--resource", "https://api.example.test/"]) } }.map {
            try $0.get()
        }
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.stderr))")
        #expect(Set(results.map(\.stdout)).count == 1, "all 16 printed the same narrow token")
        #expect(try await signIn.provider.log().count(grantType: "refresh_token") == 1)
        let issued = try await signIn.issuedAccessTokens().last
        #expect(issued?["resources"].array.compactMap(\.string) == ["https://api.example.test/"])
        try await signIn.expectNoSecretsLeaked()
    }

    @Test("a process killed with SIGKILL while holding the lock does not block the next one")
    func killedHolderDoesNotBlock() async throws {
        let signIn = try await KeyringSignIn()
        let stale = try await signIn.issuedAccessTokens().last?["value"].string
        // The first refresh hangs at the provider, so its process sits inside the lock.
        try await signIn.provider.setFault(.delay("token", milliseconds: 20_000))
        try #require(try await signIn.provider.process.control("GET", "/_test/faults")["faults"].array.count == 1)
        let holder = try TestProcess(
            signIn.authkit, ["token", "--group", signIn.group, "--min-ttl", "60"],
            environment: signIn.keyring.environment.filter { !$0.key.hasPrefix("AUTHKIT_") || $0.key.hasPrefix("AUTHKIT_TEST_") },
            stdout: .null, stderr: .null)

        let deadline = Date().addingTimeInterval(30)
        while !isLocked(signIn.lockPath) && holder.isRunning && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(isLocked(signIn.lockPath), "authkit token never took the lock at \(signIn.lockPath)")
        // ... and its refresh request is at the provider (which took the one-shot delay fault for it).
        while try await !signIn.provider.process.control("GET", "/_test/faults")["faults"].array.isEmpty && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(isLocked(signIn.lockPath), "the holder let go of the lock before its refresh answered")
        holder.send(signal: SIGKILL)
        try await offThePool { holder.wait(timeout: 10) }
        #expect(holder.termination == .signalled(SIGKILL))
        #expect(!isLocked(signIn.lockPath), "the kernel released the dead holder's flock")

        // The next process gets the lock at once (the CLI would wait up to 60 s for a live
        // holder; this bound is half of that) and refreshes.
        let next = try await signIn.execToken(timeout: 30)
        #expect(!next.timedOut)
        #expect(next.status == 0, "\(next.stderr)")
        let token = next.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!token.isEmpty && token != stale)
        #expect(try await signIn.issuedAccessTokens().last?["value"].string == token)
        #expect(
            try await signIn.provider.log().count(grantType: "refresh_token") == 1, "the next one's refresh (the killed one's still hangs)")
        try await signIn.expectNoSecretsLeaked()
    }
}
