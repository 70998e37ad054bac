import ArgumentParser
import AuthKit

#if canImport(Glibc)
import Glibc
#endif

/// `authkit agent sandbox-filter`: the seccomp filter a sandbox of the user's needs so that it
/// cannot read the kernel keyring.
struct AgentSandboxFilterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox-filter",
        abstract: "Print the seccomp filter that keeps a sandbox out of the kernel keyring (for bubblewrap's --seccomp).",
        discussion: """
            A sandbox running as you that may call keyctl can read what authkit keeps in the \
            kernel keyring — the kernel-keyring store's sign-ins and the encrypted store's \
            unlocked identity — however its session keyring is set up. This filter makes \
            add_key, request_key and keyctl fail with EPERM inside it; the forwarded agent \
            socket is then its only way to a token. It is a compiled classic BPF program, as \
            bubblewrap's --seccomp reads it; use it with a session keyring of the sandbox's own:

              authkit agent forward --group com.example.shared --socket /tmp/ak/agent.sock &
              keyctl session - bwrap --seccomp 9 9< <(authkit agent sandbox-filter) \\
                  --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /run \\
                  --bind /tmp/ak/agent.sock /run/authkit/agent.sock \\
                  --setenv AUTHKIT_AGENT_SOCK /run/authkit/agent.sock --unshare-all --share-net -- CMD

            See docs/agent.md, "Containers and sandboxes".
            """)

    func run() throws {
        guard isatty(1) == 0 else {
            Terminal.printError(
                Voice.error(
                    "the filter is binary: give it to bubblewrap, not to the terminal",
                    hint: "bwrap --seccomp 9 9< <(authkit agent sandbox-filter) …"))
            throw ExitStatus.usage
        }
        Terminal.writeBytes(fd: 1, KeyringSeccompFilter.bytes())
    }
}
