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
    /// The hint to give instead of the store's, or nil: not an unreachable store (a locked
    /// keyring or a damaged item keeps its own hint), no socket named, or an agent there that
    /// is not a forward. `refusal`: what a forwarded socket does not do for this command
    /// ("tell a sign-in's status"); nil when it serves the command.
    static func storeHint(
        for error: AuthKitError, command: String, refusal: String?, environment: [String: String]
    ) async -> String? {
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
            return "no agent answers at \(path): the forward that made it has ended; "
                + "open it again from the machine that holds the sign-in (`authkit ssh`, `authkit agent forward`), or sign in here"
        case true?:
            guard let refusal else { return nil }
            // A forward answers at once; a stopped (Ctrl-Z) one must not hold the command up.
            client.answerTimeout = .seconds(2)
            guard case .answer(let hello) = await client.send(AgentRequest(op: .hello)), hello.ok, hello.restricted == true else {
                return nil
            }
            return "this session gets access tokens from a forwarded agent socket (\(path)), which does not \(refusal): "
                + "run `authkit \(command)` on the machine that forwarded it"
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
