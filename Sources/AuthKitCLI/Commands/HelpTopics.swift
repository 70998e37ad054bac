import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(Glibc)
import Glibc
#endif

/// `authkit help environment|exit-codes|config`: what `--help` of a single command cannot say
/// (like gh's `help environment`). `authkit help NAME` for anything else that is not a command
/// is a usage error with a suggestion.
enum HelpTopics {
    /// `text` that starts at `column`, broken between words so that no line passes 80
    /// characters; each further line starts at `column` with `prefix`.
    static func wrapped(_ text: String, column: Int, prefix: String = "") -> String {
        var lines: [String] = [""]
        for word in text.split(separator: " ") {
            let line = lines[lines.count - 1]
            if !line.isEmpty, column + line.count + 1 + word.count > 80 {
                lines.append(prefix + word)
            } else {
                lines[lines.count - 1] = line.isEmpty ? String(word) : line + " " + word
            }
        }
        return lines.joined(separator: "\n" + String(repeating: " ", count: column))
    }

    static let topics: [(name: String, text: String)] = [
        (
            "environment",
            """
            Environment variables authkit reads (a flag wins over a variable, a variable
            over the config file):

              AUTHKIT_CONFIG         the config file (default
                                     $XDG_CONFIG_HOME/authkit/config, else
                                     ~/.config/authkit/config)
              AUTHKIT_PROFILE        the profile to use ([profile NAME], or microsoft)
              AUTHKIT_ISSUER         the issuer URL (may contain {tenantid})
              AUTHKIT_TENANT         the tenant for a {tenantid} issuer (default common)
              AUTHKIT_CLIENT_ID      the client id
              AUTHKIT_CLIENT_SECRET  a client secret, if the provider insists (never a flag)
              AUTHKIT_SCOPES         the scopes, space-separated
              AUTHKIT_GROUP          the group whose sign-in to share (default authkit;
                                     on a forwarded socket, the group it serves)
              AUTHKIT_STORAGE        \(wrapped(StorageChoice.names, column: 25))
              AUTHKIT_ACCOUNT        the account, when the group holds several (per shell)
              AUTHKIT_GRAPH_URL      the Microsoft Graph base URL for search
              AUTHKIT_DPOP           auto, always or never: bind a sign-in's tokens to a
                                     key (DPoP, RFC 9449; default auto)
              AUTHKIT_TPM            where a DPoP key is made: auto (the TPM at
                                     /dev/tpmrm0 when there is one, else the store), off,
                                     or a TCTI (device:/dev/tpmrm0, swtpm:path=SOCKET)
              AUTHKIT_AGENT_SOCK     the agent's socket (default
                                     $XDG_RUNTIME_DIR/authkit/agent.sock); authkit ssh
                                     sets it to the forwarded one
              AUTHKIT_FORWARD_KEY    set by authkit ssh in the remote session: opens its
                                     forward once the socket was checked
              AUTHKIT_AGENT          off: never ask the agent
              AUTHKIT_AGENT_ANSWER   set by the lean client when it hands authkit token
                                     an agent's refusal: PID LINE, taken only by that
                                     process, and only a refusal
              AUTHKIT_PLUGIN_GREETED set by the lean client when it hands authkit a
                                     plug-in whose client it already greeted (cargo):
                                     PID, taken only by that process
              AUTHKIT_ASKPASS        for the agent: a program that asks a person (as
                                     SSH_ASKPASS) when a group's confirm needs a yes
              AUTHKIT_JOURNAL_SOCKET for the agent: the journal's socket (default
                                     /run/systemd/journal/socket) its log also goes to
              AUTHKIT_SSH            the ssh program authkit ssh runs (default ssh)
              AUTHKIT_TOKEN          set, not read: where exec puts the token (--env)
              AUTHKIT_LOG            debug (or trace, info, notice, warning, error,
                                     critical): what the shared session does, to
                                     standard error; never a token
              BROWSER                the browser login opens (else xdg-open)
              NO_COLOR, LC_ALL, LC_CTYPE, LANG
                                     plain ASCII output with NO_COLOR or without UTF-8
              COLUMNS                the width search's table fits (else the terminal's)
              PATH                   where exec finds COMMAND (named in the agent's log)
              https_proxy, http_proxy, all_proxy, no_proxy (NO_PROXY)
                                     the proxy for the provider and Graph (libcurl's)
              AUTHKIT_IDENTITY_FILE  the encrypted store's identity, unsealed, for a
                                     service (else $CREDENTIALS_DIRECTORY/authkit-identity,
                                     else what `authkit unlock` keeps in the kernel)
              XDG_RUNTIME_DIR, XDG_STATE_HOME, XDG_CONFIG_HOME, XDG_DATA_HOME, HOME, TMPDIR
                                     where the agent, locks, the plain file, the config
                                     and the encrypted store live

            The clients' own files, where setup writes and the plug-ins read:
              DOCKER_CONFIG          docker's config.json folder (default ~/.docker)
              REGISTRY_AUTH_FILE     podman's, skopeo's and buildah's auth file
              CARGO_HOME             cargo's folder (default ~/.cargo)
              AWS_CONFIG_FILE        AWS's config file (default ~/.aws/config)
              AWS_REGION, AWS_DEFAULT_REGION
                                     the region of credential aws's STS endpoint (else
                                     the global https://sts.amazonaws.com)
              AWS_ENDPOINT_URL_STS, AWS_ENDPOINT_URL
                                     another STS endpoint (before the region's;
                                     AWS_ENDPOINT_URL only when AWS's or loopback)
              AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
                                     true: neither of the two, as for the AWS SDKs

            Set by the programs that run authkit (nothing to set yourself):
              KUBERNETES_EXEC_INFO   kubectl: the ExecCredential version it speaks,
                                     and the API server (provideClusterInfo)
              GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE
                                     Google's auth libraries: the token type asked for
              GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE, GOOGLE_EXTERNAL_ACCOUNT_REVOKE
                                     Google's auth libraries: their interactive mode
                                     (refused) and a revocation (nothing revoked)
              LISTEN_FDS, LISTEN_PID systemd: the agent's socket (setup agent)
            """
        ),
        (
            "exit-codes",
            """
            Exit codes, the same for every command:

              0  success: signed in and usable, token printed, users listed
              1  not signed in, or the sign-in needs a new login
              2  usage or configuration error: nothing was attempted
              3  token storage unavailable (no D-Bus session, no Secret Service, keyring
                 locked, kernel keyring blocked or full, encrypted store locked:
                 `authkit unlock`)
              4  the identity provider or Microsoft Graph failed or could not be reached
              5  jwt verify: token malformed, or its signature or key rejected
              6  jwt verify: signature good, claims rejected (expired, wrong audience ...)
              7  the provider rejected the configuration: unknown client id, wrong
                 secret, an issuer the provider does not name as its own
              8  token: even a fresh token lives less than --min-ttl (--allow-shorter
                 prints it anyway)
              9  unlock, login: the passphrase does not open the encrypted store's
                 identity; nothing was changed
             10  the agent refused: a forward does not serve that, a group's allow
                 list does not name the asker, or the person asked said no
             22  request: the server answered HTTP 400 or more (the body is on stdout)
            `authkit exec` exits with its command's status (127: the command was not found).
            """
        ),
        (
            "config",
            """
            The config file: $AUTHKIT_CONFIG, else $XDG_CONFIG_HOME/authkit/config, else
            ~/.config/authkit/config (`authkit config path`). INI style; unknown sections
            and keys are errors naming the file and line (in a profile the command does not
            use: a warning). Used only when it and its directory are yours (or root's) and
            nobody else can write them. `authkit config` shows the effective settings and
            where each one comes from.

              [defaults]
              profile = work                  # also group, storage

              [profile work]
              issuer = https://login.example.com/realms/staff
              client_id = my-cli
              scopes = openid profile offline_access
              group = com.example.shared
              storage = secret-service        \(wrapped("# or " + StorageChoice.allCases.dropFirst().map(\.rawValue).joined(separator: ", "), column: 34, prefix: "# "))

              [credential "https://dev.azure.com"]   # git: authkit credential git
              profile = work
              scopes = 499b84ac-1321-427f-aa17-267ca6975798/.default

              [registry "registry.example.com"]      # docker-credential-authkit
              profile = work

              [group "com.example.prod"]     # what the agent does before a token goes out
              confirm = once                  # always, once or never (default)
              confirm_for = 10m               # how long a once yes lasts (90s ... 24h)
              allow = git kubectl /usr/bin/curl   # the programs that may have tokens

            A [group "NAME"] section rules the tokens an agent or a forward hands out (a
            command that reads the store itself is not asked); the agent asks a person
            through AUTHKIT_ASKPASS, `authkit agent forward --confirm` on its terminal.
            More: `authkit help agent`, and the README, "Approval and the audit log".

            Every key, by section:
              [profile NAME]  \(wrapped(ConfigFile.profileKeys.sorted().joined(separator: ", "), column: 18))
              [credential "URL"], [registry "HOST"]
                              \(wrapped(ConfigFile.credentialKeys.sorted().joined(separator: ", "), column: 18))
              [defaults]      \(ConfigFile.defaultsKeys.sorted().joined(separator: ", "))
              [group "NAME"]  \(ConfigFile.groupKeys.sorted().joined(separator: ", "))
            """
        ),
    ]

    /// Handles `help TOPIC`; returns false for anything ArgumentParser should handle.
    static func handle(_ arguments: [String], commands: [String]) -> Bool {
        guard arguments.count == 2, arguments[0] == "help" else { return false }
        let name = arguments[1]
        if let topic = topics.first(where: { $0.name == name }) {
            Terminal.printOut(topic.text)
            exit(0)
        }
        guard !commands.contains(name), !name.hasPrefix("-") else { return false }
        let known = commands + topics.map(\.name).filter { !commands.contains($0) }
        let suggestion = known.first { ConfigFile.similar($0, name) || $0.hasPrefix(name) }.map { " (did you mean \($0)?)" } ?? ""
        Terminal.printError(Voice.error("no command or help topic ‘\(name)’\(suggestion)", hint: "known: \(known.joined(separator: ", "))"))
        exit(ExitStatus.usage.rawValue)
    }

    /// Before ArgumentParser: an unknown command gets a "did you mean" (exit 2), and
    /// `--version` belongs to `authkit` itself, not to a subcommand (`authkit status --version`
    /// would print the version and hide the mistake). Words after `--` are never looked at
    /// (`authkit exec -- tool --version`).
    static func checkCommandLine(_ arguments: [String], commands: [String]) {
        let own = arguments.prefix { $0 != "--" }
        if let first = own.first, !first.hasPrefix("-"), first != "help", !commands.contains(first) {
            let suggestion = commands.first { ConfigFile.similar($0, first) || (first.count >= 2 && $0.hasPrefix(first)) }
            Terminal.printError(
                Voice.error(
                    "unknown command ‘\(first)’" + (suggestion.map { " (did you mean \($0)?)" } ?? ""),
                    hint: "commands: \(commands.joined(separator: ", ")); see `authkit --help`"))
            exit(ExitStatus.usage.rawValue)
        }
        if let first = own.first, !first.hasPrefix("-"), own.dropFirst().contains("--version") {
            Terminal.printError(Voice.error("--version is an option of authkit itself, not of a command", hint: "run `authkit --version`"))
            exit(ExitStatus.usage.rawValue)
        }
    }
}
