import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Who asks the agent: the process at the other end of a connection as `/proc` describes it —
/// its executable, a bounded and cleaned command line, its parents up to the session, the
/// systemd unit or container it runs in — and, on a forwarded socket, the forward itself.
///
/// What it can prove: the kernel's `SO_PEERCRED` names the pid, and a pid whose start time
/// changed while it was read is reported as exited, never under another process's name. What
/// it cannot: a process of the same user chooses its own executable and command line, so a
/// name is a claim, not an identity; a process in another pid namespace (a container) is seen
/// with the pid and paths of the host.
package struct AgentAsker: Sendable, Equatable, Codable {
    /// One process of the chain.
    package struct Process: Sendable, Equatable, Codable {
        package var pid: Int32
        /// The short name (`comm`), e.g. `git`.
        package var name: String
        /// The executable's path, or nil when it cannot be read.
        package var executable: String?
        /// The command line, at most ``maximumCommandLine`` characters, control characters
        /// replaced.
        package var commandLine: String
        /// True for authkit itself (a plug-in, `token`, `exec`) — a process whose executable is
        /// the agent's own, or the lean client beside it, whatever it calls itself: the program
        /// that asks is further up.
        package var isAuthkit = false

        /// A shell's `-c`: it runs a command given to it (a helper), it was not typed in.
        var runsHelper: Bool { commandLine.split(separator: " ").dropFirst().contains("-c") }

        /// The name, and the executable's when the process calls itself something else (`comm`
        /// is the process's own choice; the kernel sets the executable).
        var shownName: String {
            guard let executable, let base = executable.split(separator: "/").last.map(String.init),
                !base.hasPrefix(name.prefix(15)), !name.hasPrefix(base.prefix(15))
            else { return name }
            return "\(name) [\(ProcText.cleaned(base, limit: 64))]"
        }
    }

    /// Shells: one that runs a helper (`sh -c …`, as git runs its credential helper) is not the
    /// program that wants the token; one without `-c` is where a person typed the command (or
    /// a script that runs it).
    static let shells: Set<String> = ["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "busybox"]

    /// Where the request comes from past authkit itself: the index in ``chain`` of the first
    /// process that is neither authkit nor a shell running a helper — a program, or the shell a
    /// command was typed in.
    var originIndex: Int? {
        chain.indices.first { index in
            let process = chain[index]
            return !process.isAuthkit && !(Self.shells.contains(process.name) && process.runsHelper)
        }
    }

    /// The programs the token is for, nearest first, at most three: from the origin up, without
    /// shells; the shell itself when the command was typed in one (or a script ran it); the
    /// asker itself when nothing else is there.
    package var programs: [Process] {
        guard let start = originIndex else { return Array(chain.prefix(1)) }
        if Self.shells.contains(chain[start].name) { return [chain[start]] }
        return Array(chain[start...].filter { !Self.shells.contains($0.name) }.prefix(3))
    }

    /// The asker first, then its parents, up to the session leader, pid 1 or ``maximumDepth``.
    /// Empty when the asker exited before it was read.
    package var chain: [Process]
    /// The session leader's pid and start time: what `confirm = once` remembers a yes for.
    package var session: String?
    /// The systemd unit or container the asker runs in (from its cgroup), if any.
    package var unit: String?
    /// On a forwarded socket: the forward (`authkit ssh dev.example.com`, `agent forward …`).
    package var via: String?
    /// The program authkit asks for when it runs one itself (`authkit exec -- curl`): what
    /// authkit says, recorded only when the asker is authkit.
    package var program: String?

    package static let maximumCommandLine = 200
    package static let maximumDepth = 6
    /// Processes remembered by pid and start time (a pid's start time never repeats for it).
    static let maximumKnown = 512

    private struct ProcessKey: Hashable {
        var root: String
        var pid: Int32
        var startTime: UInt64
    }

    private static let known = Mutex<[ProcessKey: Process]>([:])

    /// The asker's pid, or nil when it exited.
    package var pid: Int32? { chain.first?.pid }
    /// The asker's executable (nil when it exited or cannot be read).
    package var executable: String? { chain.first?.executable }

    /// The process the token is for: the nearest of ``programs``, else the asker itself.
    package var process: Process? { programs.first ?? chain.first }

    /// Who asks, for a question and the log, the asker's own pid always named:
    /// * a program through authkit: "git-remote-http (pid 4242) ← git ← bash, through authkit
    ///   credential git (pid 4250)";
    /// * a command typed in a shell: "authkit token (pid 4250) typed in bash (pid 4100) ← su";
    ///   run by a script: "… run by bash deploy.sh (pid 4100) ← cron";
    /// * a program authkit runs (`exec`): "/usr/bin/curl run by authkit exec (pid 4250), typed
    ///   in bash (pid 4100) ← su", or "… (pid 4250) for make (pid 4200) ← bash";
    /// * anything else that speaks the protocol itself: "python3 (pid 4300) ← bash".
    /// A name the process chose (`comm`) that is not its executable's is followed by the
    /// executable's name: "authkit [python3.11] (pid 4300)".
    package var summary: String {
        let suffix = (unit.map { " [\($0)]" } ?? "") + (via.map { ", via \($0)" } ?? "")
        guard let asker = chain.first else { return "a process that has exited" + (via.map { ", via \($0)" } ?? "") }
        guard asker.isAuthkit, let origin = originIndex else { return Self.describe(chain[...]) + suffix }
        let me = (program.map { "\($0) run by " } ?? "") + "\(Self.command(asker)) (pid \(asker.pid))"
        let above = chain[origin...]
        let head = chain[origin]
        if Self.shells.contains(head.name) {
            let how = head.commandLine.split(separator: " ").dropFirst().contains { !$0.hasPrefix("-") } ? "run by" : "typed in"
            let shell = head.commandLine.split(separator: " ").count > 1 && how == "run by" ? head.commandLine : head.name
            var parts = ["\(ProcText.cleaned(shell, limit: 60)) (pid \(head.pid))"] + above.dropFirst().map(\.name)
            if parts.count > 4 { parts = Array(parts.prefix(4)) + ["…"] }
            return me + (program == nil ? " " : ", ") + how + " " + parts.joined(separator: " ← ") + suffix
        }
        if program != nil { return me + " for " + Self.describe(above) + suffix }
        return Self.describe(above) + ", through " + me + suffix
    }

    /// "name (pid N) ← parent ← …", at most four processes.
    private static func describe(_ processes: ArraySlice<Process>) -> String {
        guard let first = processes.first else { return "a process that has exited" }
        var parts = ["\(first.shownName) (pid \(first.pid))"] + processes.dropFirst().map(\.name)
        if parts.count > 4 { parts = Array(parts.prefix(4)) + ["…"] }
        return parts.joined(separator: " ← ")
    }

    /// "authkit token", "authkit credential git": authkit and the words of its command line up
    /// to the first option, at most three.
    private static func command(_ process: Process) -> String {
        let words = process.commandLine.split(separator: " ").dropFirst().prefix { !$0.hasPrefix("-") }.prefix(2)
        return (["authkit"] + words.map(String.init)).joined(separator: " ")
    }

    package init(chain: [Process], session: String? = nil, unit: String? = nil, via: String? = nil) {
        self.chain = chain
        self.session = session
        self.unit = unit
        self.via = via
    }

    /// Reads the asker `pid` from `/proc` (`root` for tests).
    /// `authkit` is the agent's own executable: a process running it is authkit, not the asker.
    package static func resolve(pid: Int32, via: String? = nil, authkit: String? = nil, root: String = "/proc") -> AgentAsker {
        var chain: [Process] = []
        var session: String?
        var current = pid
        while current > 1, chain.count < maximumDepth {
            guard let before = ProcStat(read(root, current, "stat")) else { break }
            // A process already read (the same pid, start time and executable: the same process,
            // which has not exec'd another program since) is not read again — the shell, the
            // terminal and the session above every asker.
            let key = ProcessKey(root: root, pid: current, startTime: before.startTime)
            let executable = readLink("\(root)/\(current)/exe").map { ProcText.cleaned($0, limit: 256) }
            if let known = known.withLock({ $0[key] }), known.executable == executable {
                chain.append(known)
            } else {
                let name = ProcText.cleaned(before.name, limit: 64)
                let arguments = ProcText.commandLine(read(root, current, "cmdline") ?? [], limit: maximumCommandLine)
                // Read again: a pid reused meanwhile has another start time, and is not named.
                guard let after = ProcStat(read(root, current, "stat")), after.startTime == before.startTime else { break }
                let isAuthkit = executable.map { Self.isAuthkit(Self.withoutDeleted($0), agent: authkit.map(Self.withoutDeleted)) } ?? false
                let process = Process(pid: current, name: name, executable: executable, commandLine: arguments, isAuthkit: isAuthkit)
                chain.append(process)
                known.withLock { known in
                    if known.count >= maximumKnown { known.removeAll() }
                    known[key] = process
                }
            }
            if chain.count == 1, before.session > 0 {
                let leader = before.session == current ? before : ProcStat(read(root, before.session, "stat"))
                session = leader.map { "\(before.session)@\($0.startTime)" }
            } else if chain.count == 1 {
                session = outermostAncestor(of: current, stat: before, root: root)
            }
            if current == before.session { break }
            current = before.parent
        }
        let unit = chain.isEmpty ? nil : ProcText.unit(fromCgroup: read(root, pid, "cgroup") ?? [])
        return AgentAsker(chain: chain, session: session, unit: unit, via: via)
    }

    /// The session when its leader lives outside this pid namespace (the kernel shows session 0,
    /// as in a container started by `docker exec` or `unshare --pid`): the outermost ancestor
    /// this namespace shows, the one whose parent is init or unseen. A parent that cannot be read
    /// (it exited), or that started after its child (its pid reused meanwhile), leaves no
    /// session, so nothing is remembered for a tree that is not known. Only where `/proc` is this
    /// namespace's own: read through another's, pids name other processes.
    private static func outermostAncestor(of pid: Int32, stat: ProcStat, root: String) -> String? {
        guard root != "/proc" || procIsOurs else { return nil }
        var current = (pid: pid, stat: stat)
        for _ in 0..<64 {
            if current.stat.parent <= 1 { return "\(current.pid)@\(current.stat.startTime)" }
            guard let parent = ProcStat(read(root, current.stat.parent, "stat")), parent.startTime <= current.stat.startTime else {
                return nil
            }
            current = (current.stat.parent, parent)
        }
        return nil
    }

    /// True when `/proc` is mounted for this process's pid namespace (`/proc/self` is our pid).
    private static let procIsOurs: Bool = readLink("/proc/self") == String(getpid())

    private static func read(_ root: String, _ pid: Int32, _ file: String) -> [UInt8]? {
        let fd = open("\(root)/\(pid)/\(file)", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 16 << 10 {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    /// authkit itself: the agent's own executable, or the lean client installed with it (which
    /// hands what it does not answer to that executable): beside it, or where the package puts
    /// it, `../lib/authkit/` from its folder (`/usr/bin/authkit`, `/usr/lib/authkit/authkit-lean`).
    static func isAuthkit(_ executable: String, agent: String?) -> Bool {
        guard let agent, let slash = agent.lastIndex(of: "/") else { return false }
        let folder = agent[..<slash], up = folder.lastIndex(of: "/").map { folder[..<$0] } ?? "/nowhere"
        return [agent, folder + "/authkit-lean", up + "/lib/authkit/authkit-lean"].contains(executable)
    }

    /// The agent's own executable (`/proc/self/exe`).
    package static var ownExecutable: String? { readLink("/proc/self/exe") }

    /// An executable replaced since it started (an upgrade) reads `… (deleted)`.
    private static func withoutDeleted(_ path: String) -> String {
        path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The fields of `/proc/PID/stat` the asker needs: the name between the first `(` and the
/// last `)`, then state, parent, process group, session, … start time (field 22).
struct ProcStat: Equatable {
    var name: String
    var parent: Int32
    var session: Int32
    var startTime: UInt64

    init?(_ bytes: [UInt8]?) {
        guard let bytes, let open = bytes.firstIndex(of: UInt8(ascii: "(")), let close = bytes.lastIndex(of: UInt8(ascii: ")")),
            open < close
        else { return nil }
        name = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
        let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        // After the name: state(3) ppid(4) pgrp(5) session(6) … starttime(22).
        guard fields.count >= 20, let parent = Int32(fields[1]), let session = Int32(fields[3]), let start = UInt64(fields[19]) else {
            return nil
        }
        self.parent = parent
        self.session = session
        self.startTime = start
    }
}

/// Text from `/proc`, made safe to show: bounded, no control characters.
enum ProcText {
    static func cleaned(_ text: String, limit: Int) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            guard result.unicodeScalars.count < limit else { return result + "…" }
            result.unicodeScalars.append(ProviderText.isUnsafe(scalar) ? "?" : scalar)
        }
        return result
    }

    /// `cmdline`'s NUL-separated arguments joined with spaces, with anything that may be a
    /// secret replaced: a program's command line can carry a token (`tool --token=$(authkit
    /// token)`), and the log goes to the journal.
    static func commandLine(_ bytes: [UInt8], limit: Int) -> String {
        let arguments = bytes.split(separator: 0).map { redacted(String(decoding: $0, as: UTF8.self)) }
        return cleaned(arguments.joined(separator: " "), limit: limit)
    }

    /// `text` with every run of 24 or more characters of a token's alphabet (letters, digits,
    /// `-._~+/=`) that holds both letters and digits and is not a path replaced by
    /// `[redacted]`: a JWT, an opaque token, a cloud secret key — and, as a price, a long hash
    /// or a UUID. In a path or a URL (a run that starts with `/`) each segment is judged alone,
    /// so a token in a webhook's path (`…/hook/<token>`) goes and the path around it stays.
    static func redacted(_ text: String) -> String {
        var result = ""
        var run = ""
        func isSecret(_ word: Substring) -> Bool {
            word.count >= 24 && word.contains(where: \.isNumber) && word.contains(where: \.isLetter)
        }
        func flush() {
            if !run.hasPrefix("/") {
                result += isSecret(run[...]) ? "[redacted]" : run
            } else {
                result += run.split(separator: "/", omittingEmptySubsequences: false).map { isSecret($0) ? "[redacted]" : String($0) }
                    .joined(separator: "/")
            }
            run = ""
        }
        for character in text {
            if character.isASCII && (character.isLetter || character.isNumber || "-._~+/=".contains(character)) {
                run.append(character)
            } else {
                flush()
                result.append(character)
            }
        }
        flush()
        return result
    }

    /// The systemd unit (`app-…-1234.scope`, `foo.service`) or a container's id from a cgroup
    /// v2 line (`0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service`).
    static func unit(fromCgroup bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("0::") }) else { return nil }
        let components = line.dropFirst(3).split(separator: "/")
        for component in components.reversed() {
            if component.hasPrefix("docker-") || component.hasPrefix("libpod-") || component.hasPrefix("crio-") {
                return cleaned("container " + component.prefix(20), limit: 64)
            }
            if component.hasSuffix(".service") || component.hasSuffix(".scope") {
                return cleaned(String(component), limit: 96)
            }
        }
        return nil
    }
}
