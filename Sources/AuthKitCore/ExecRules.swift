#if hasFeature(Embedded)
import CLibc
#elseif canImport(Glibc)
import Glibc
#endif

/// `authkit exec`'s rules, shared by authkit's command and the lean client: which variable may
/// carry the token, and which program the agent is told it is for.
package enum ExecRules {
    /// The variable the token goes in unless `--env` names another.
    package static let defaultVariable = "AUTHKIT_TOKEN"

    /// What the lean client hands authkit in its own process (a refusal, cargo's hello said):
    /// never the command's.
    package static let handedOverVariables = ["AUTHKIT_AGENT_ANSWER", "AUTHKIT_PLUGIN_GREETED"]

    /// Letters, digits and `_`, not starting with a digit.
    package static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// Variables the dynamic loader, the shell or the program's own start-up read before CMD
    /// could: a token there would be loaded, executed, searched or printed (`LD_PRELOAD`
    /// made ld.so print it). Why one is refused, or nil.
    package static func refusedVariable(_ name: String) -> String? {
        if name.hasPrefix("LD_") { return "the dynamic loader reads LD_* variables" }
        let libc: Set = ["GLIBC_TUNABLES", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TZDIR"]
        if libc.contains(name) || name.hasPrefix("MALLOC_") { return "the C library reads \(name) as the program starts" }
        let shell: Set = ["PATH", "HOME", "IFS", "SHELL", "PWD", "BASH_ENV", "ENV", "CDPATH", "PS4", "SHELLOPTS", "BASHOPTS"]
        if shell.contains(name) { return "the shell and other programs read \(name) before the command runs" }
        if name.hasPrefix("BASH_FUNC_") { return "bash runs BASH_FUNC_* variables as functions" }
        // Options an interpreter reads (and often prints) before the program does.
        let runtimes: Set = [
            "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "NODE_OPTIONS", "PYTHONSTARTUP", "PYTHONPATH",
            "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB",
        ]
        if runtimes.contains(name) { return "interpreters read \(name) as options or code before the command runs" }
        if name.hasPrefix("AUTHKIT_"), name != defaultVariable {
            return "authkit itself reads AUTHKIT_* (one the command runs, git's helper say, would take it as a setting)"
        }
        let resolver: Set = ["LOCALDOMAIN", "RES_OPTIONS"]
        if resolver.contains(name) { return "the resolver reads \(name) and would send it in DNS queries" }
        let proxies: Set = ["http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"]
        if proxies.contains(name.lowercased()) { return "HTTP clients read \(name) as the proxy to send requests through" }
        if ["LANG", "LANGUAGE", "TERM"].contains(name) || name.hasPrefix("LC_") { return "every program reads \(name) as it starts" }
        let commands: Set = ["EDITOR", "VISUAL", "PAGER", "BROWSER", "GIT_EDITOR", "GIT_PAGER", "GIT_SSH", "GIT_SSH_COMMAND"]
        if commands.contains(name) || name.hasSuffix("ASKPASS") { return "programs run \(name) as a command" }
        return nil
    }

    /// The program as the agent's log should name it (and exec runs it): its path on `path`
    /// (`PATH`; nil: `/usr/bin:/bin`), searched as `execvp` searches — the first executable
    /// regular file, else the first file of that name there (which then cannot run: 126, as a
    /// shell says), else the name as given (not found: 127).
    package static func programPath(_ name: String?, path: String?) -> String? {
        guard let name, !name.isEmpty else { return nil }
        guard !name.contains("/") else { return name }
        var found: String?
        // As execvp searches: an empty entry is the current directory.
        for entry in (path ?? "/usr/bin:/bin").split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (entry.isEmpty ? "." : String(entry)) + "/" + name
            var status = stat()
            guard stat(candidate, &status) == 0 else { continue }
            if status.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
            if found == nil { found = candidate }
        }
        return found ?? name
    }
}
