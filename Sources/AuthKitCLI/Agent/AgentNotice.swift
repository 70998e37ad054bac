import AuthKitCore
import ArgumentParser
import AuthKit
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// What a command tells a session that names an agent socket (`AUTHKIT_AGENT_SOCK`, as
/// `authkit ssh` and a container's forward set it) when it cannot reach a token store: that a
/// forwarded socket does not do this, or that nothing listens on the socket any more — not
/// how to start a D-Bus session on a machine that was never meant to hold the sign-in.
enum AgentNotice {
    /// What to say instead of the store's error: the forward's words first, then what to do.
    struct Notice {
        var summary: String
        var hint: String
    }

    /// Reports `error` as `notice` says when there is one (the error's exit code kept), else as
    /// the store said it.
    static func failure(_ error: AuthKitError, _ notice: Notice?) -> ExitCode {
        guard let notice else { return AuthKitCLI.failure(error) }
        LogSetup.logger.debug("the store's error", metadata: ["error": "\(error)"])
        Terminal.printError(Voice.error(notice.summary, hint: notice.hint))
        return exitCode(for: error)
    }

    /// What to say instead of the store's error, or nil: not an unreachable store (a locked
    /// keyring or a damaged item keeps its own words), no socket named, or an agent there that
    /// is not a forward. `refusal`: what a forwarded socket does not do for this command
    /// ("tell a sign-in's status"); nil when it serves the command.
    static func storeNotice(
        for error: AuthKitError, command: String, refusal: String?, environment: [String: String]
    ) async -> Notice? {
        guard Self.storeIsUnreachable(error), environment["AUTHKIT_AGENT_SOCK"].map({ !$0.isEmpty }) == true,
            var client = AgentClient(environment: environment)
        else { return nil }
        let path = client.path
        // Only a socket nobody listens on is a forward that ended; another user's socket, a
        // busy or silent agent keep the store's hint. Its own thread: connect may wait.
        let listening = await OwnThread.run { () -> Bool? in
            switch AgentSocket.connect(path) {
            case .success(let fd):
                close(fd)
                return true
            case .failure(let failure): return failure.code == ENOENT || failure.code == ECONNREFUSED ? false : nil
            }
        }
        switch listening {
        case false?:
            return Notice(
                summary: "no agent answers at \(path): the forward that made it has ended",
                hint: "open it again from the machine that holds the sign-in (`authkit ssh`, `authkit agent forward`), or sign in here")
        case true?:
            guard let refusal else { return nil }
            // A forward answers at once; a stopped (Ctrl-Z) one must not hold the command up.
            client.answerTimeout = .seconds(2)
            guard case .answer(let hello) = await client.send(AgentRequest.hello), hello.ok, hello.restricted == true else {
                return nil
            }
            return Notice(
                summary: "this session gets access tokens from a forwarded agent socket (\(path)), which does not \(refusal)",
                hint: "run `authkit \(command)` on the machine that forwarded it")
        case nil:
            return nil
        }
    }

    /// No store to reach here at all (no D-Bus session, no Secret Service, no kernel keyring): what a session
    /// on a forwarded socket meets.
    static func storeIsUnreachable(_ error: AuthKitError) -> Bool {
        guard case .storage(let store) = error else { return false }
        return store.meansNoStoreHere
    }
}
