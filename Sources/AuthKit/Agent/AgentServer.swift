import AuthKitCore
import CProcessGuard
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The agent's I/O shell: a unix socket, a peer check on every connection, lines in and out.
/// Everything the protocol decides is ``AgentStateMachine``'s; fetching a token is the shared
/// session's (``AgentSessions``).
///
/// * Only the agent's own user may connect: the kernel's `SO_PEERCRED` on the accepted
///   descriptor decides; anyone else is refused and logged.
/// * The socket is created 0600 in a directory only its user can write; a socket file left by
///   a dead agent is replaced, a live agent's is never taken over.
/// * A connection that sends nothing for ``Configuration/idleTimeout`` while it waits for no
///   answer is closed; so is one whose request line is longer than
///   ``AgentLineDecoder/maximumRequestBytes`` or takes longer than
///   ``AgentLineDecoder/lineTimeout`` to arrive. At the connection limit the oldest connection
///   that waits for no answer makes room for a new one. A slow or hostile client holds only its
///   own connection, for a bounded time.
package final class AgentServer: Sendable {
    package struct Configuration: Sendable {
        package var socketPath: String
        package var policy: AgentPolicy
        package var recheckInterval: Double = 1
        package var idleTimeout: TimeAmount = .seconds(30)
        /// Open connections at most (a forwarded socket: 64, as a remote or sandbox may hold
        /// them); the agent raises its open-file limit to fit.
        package var connectionLimit = 4096
        /// A listening socket handed over by systemd (socket activation), used instead of
        /// making one at ``socketPath``; systemd owns its file.
        package var inheritedDescriptor: Int32?
        /// Asks the person at the forwarding terminal (``AgentPolicy/confirm``).
        package var confirmer: (@Sendable (String) async -> Bool)?
        /// Asks through a program when there is no terminal (`AUTHKIT_ASKPASS`).
        package var askpass: AgentAskpass?
        /// Where audit events go besides the agent's memory.
        package var journal: AgentJournal?
        /// A forwarded socket: the forward, as every asker on it is described
        /// (`authkit ssh dev.example.com`).
        package var via: String?
        /// Where the config file (the groups' rules) is found.
        package var environment: [String: String] = [:]
        package init(socketPath: String, policy: AgentPolicy) {
            self.socketPath = socketPath
            self.policy = policy
            if policy.isRestricted { connectionLimit = 64 }
        }
    }

    /// Why the agent cannot serve.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    package let path: String
    let channel: any Channel
    let core: AgentCore
    /// The socket file this agent made (device, inode), which it removes when it stops; nil
    /// for systemd's.
    let identity: (dev: UInt64, ino: UInt64)?

    private init(path: String, channel: any Channel, core: AgentCore, identity: (UInt64, UInt64)?) {
        self.path = path
        self.channel = channel
        self.core = core
        self.identity = identity
    }

    /// Forbids core dumps and ptrace of this process (the agent's tokens live in its memory).
    package static func protectMemory() -> Bool {
        ak_forbid_dumps() == 0
    }

    /// Listens on `configuration.socketPath`.
    package static func start(
        _ configuration: Configuration, sessions: AgentSessions, logger: Logger
    ) async throws(Failure) -> AgentServer {
        let path = configuration.socketPath
        if configuration.inheritedDescriptor == nil { try prepare(path) }
        var policy = configuration.policy
        if let lifetime = policy.lifetime { policy.servesUntil = AgentCore.now().monotonic + lifetime }
        let core = AgentCore(
            machine: AgentStateMachine(policy: policy, recheckInterval: configuration.recheckInterval, pid: getpid()),
            sessions: sessions, logger: logger, confirmer: configuration.confirmer, askpass: configuration.askpass,
            journal: configuration.journal, via: configuration.via, environment: configuration.environment)
        let limit = configuration.connectionLimit
        raiseDescriptorLimit(to: limit + 64)
        let idle = configuration.idleTimeout
        let previous = umask(0o177)
        let channel: any Channel
        do {
            let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(ChannelOptions.backlog, value: AgentServer.backlog)
                .childChannelInitializer { child in
                    AgentServer.admit(child, core: core, logger: logger, limit: limit, idle: idle)
                }
            if let inherited = configuration.inheritedDescriptor {
                channel = try await bootstrap.withBoundSocket(inherited).get()
            } else {
                channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
            }
        } catch {
            umask(previous)
            throw Failure("cannot listen on \(path): \(error)")
        }
        umask(previous)
        var identity: (UInt64, UInt64)?
        if configuration.inheritedDescriptor == nil {
            var info = stat()
            guard lstat(path, &info) == 0 else {
                try? await channel.close().get()
                throw Failure("the socket \(path) vanished as it was made")
            }
            identity = (UInt64(info.st_dev), UInt64(info.st_ino))
        }
        let server = AgentServer(path: path, channel: channel, core: core, identity: identity)
        await core.attach { [server] in Task { await server.close() } }
        await core.forward(.opened)
        logger.info("agent listening", metadata: ["socket": "\(path)", "restricted": "\(configuration.policy.isRestricted)"])
        return server
    }

    /// Waits until the agent stops (a `stop` request, or ``close()``).
    package func run() async {
        try? await channel.closeFuture.get()
    }

    /// For a forward that may end on a signal: the journal's socket and the datagram that says
    /// it closed, to send from the handler (nil: not a forward, or no journal).
    package func farewell() async -> (journal: String, datagram: [UInt8])? {
        await core.farewell()
    }

    /// Stops listening and removes the socket file (only the one this agent made).
    package func close() async {
        try? await channel.close().get()
        await core.forward(.closed)
        var info = stat()
        if let identity, lstat(path, &info) == 0, UInt64(info.st_dev) == identity.dev, UInt64(info.st_ino) == identity.ino {
            unlink(path)
        }
    }

    /// How many tokens the agent holds now.
    package func heldCount() async -> Int { await core.heldCount }

    /// The listening unix socket systemd passed (`LISTEN_PID`, `LISTEN_FDS`: descriptor 3),
    /// or nil when the agent was not socket-activated. Only a listening stream socket of the
    /// unix family is taken.
    package static func systemdSocket(environment: [String: String]) -> (descriptor: Int32, path: String)? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(), environment["LISTEN_FDS"] == "1" else { return nil }
        let fd: Int32 = 3
        var type: Int32 = 0, listening: Int32 = 0, family = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_STREAM.rawValue) else { return nil }
        length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening == 1 else { return nil }
        var address = sockaddr_un()
        var addressLength = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &addressLength) == 0 }
        }
        _ = family
        guard named, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        return (fd, path.isEmpty ? "(systemd's socket)" : path)
    }

    /// The soft open-file limit up to `wanted` (never past the hard limit).
    /// Connections the kernel queues before the agent accepts them: a burst of clients (a
    /// build starting a thousand `git` fetches) waits in the queue instead of finding it full
    /// and falling back to the store. The kernel caps it at `net.core.somaxconn`.
    static let backlog: Int32 = 4096

    static func raiseDescriptorLimit(to wanted: Int) {
        var limits = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits) == 0, limits.rlim_cur < rlim_t(wanted) else { return }
        limits.rlim_cur = min(rlim_t(wanted), limits.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limits)
    }

    // MARK: The socket file

    /// A private directory, and no live agent on the path (a stale socket file is removed).
    static func prepare(_ path: String) throws(Failure) {
        guard AgentSocket.address(path) != nil else {
            throw Failure("the socket path \(path) is too long (at most \(AgentExchange.maximumPathBytes - 1) bytes)")
        }
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/") else { throw Failure("the socket path \(path) is not absolute") }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure("cannot create \(directory): \(String(cString: strerror(errno)))")
        }
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw Failure("cannot open \(directory): \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Failure("cannot inspect \(directory)") }
        guard info.st_uid == getuid() else { throw Failure("\(directory) belongs to another user; choose a directory of your own") }
        guard info.st_mode & 0o022 == 0 else {
            throw Failure("others can write to \(directory), so they could replace the socket; run chmod 700 \(directory)")
        }
        var existing = stat()
        guard fstatat(fd, String(path[path.index(after: slash)...]), &existing, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard existing.st_mode & S_IFMT == S_IFSOCK else { throw Failure("\(path) exists and is not a socket; it was left alone") }
        switch AgentSocket.connect(path) {
        case .success(let live):
            let owner = AgentSocket.peer(live)
            Glibc.close(live)
            throw Failure(
                "an agent already serves \(path)" + (owner.map { " (pid \($0.pid))" } ?? "") + "; stop it first (authkit agent stop)")
        case .failure(let failure) where failure.code == ECONNREFUSED:
            // Nobody listens: a dead agent's file, replaced.
            unlink(path)
        case .failure(let failure):
            // A busy agent (a full queue), or a socket we may not use: never taken over.
            throw Failure("\(path) may still be served (\(failure.description)); it was left alone")
        }
    }

    // MARK: Connections

    static func admit(_ child: any Channel, core: AgentCore, logger: Logger, limit: Int, idle: TimeAmount) -> EventLoopFuture<Void> {
        guard let provider = child as? any SocketOptionProvider else {
            return child.close()
        }
        let credentials: EventLoopFuture<AgentSocket.PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.flatMap { peer in
            guard peer.uid == getuid() else {
                logger.warning("refused a connection from another user", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
                return child.close()
            }
            return core.open(child, peer: peer.pid, limit: limit).flatMap { id in
                guard let id else { return child.close() }
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandlers([
                        IdleStateHandler(readTimeout: idle),
                        ByteToMessageHandler(AgentLineDecoder(deadline: AgentLineDecoder.lineTimeout)),
                        AgentConnectionHandler(core: core, connection: id),
                    ])
                }
            }
        }
    }
}

extension AgentServer {
    /// A directory only this user can use, for a socket: `$XDG_RUNTIME_DIR/authkit`, else a
    /// new `authkit-XXXXXX` under `$TMPDIR` (or /tmp), made 0700 as ssh-agent does.
    package static func privateDirectory(environment: [String: String]) throws(Failure) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let path = runtime + "/authkit"
            if mkdir(path, 0o700) != 0 && errno != EEXIST { throw Failure("cannot create \(path): \(String(cString: strerror(errno)))") }
            return path
        }
        let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        // One folder per user, so that a second `agent start` finds the first agent: used only
        // when it is this user's own and nobody else's (made now, or found so: a folder someone
        // else made first is never used, and a random one is made instead).
        let own = base + "/authkit-\(getuid())"
        if mkdir(own, 0o700) == 0 || errno == EEXIST, Self.isPrivateFolder(own) { return own }
        var template = Array((base + "/authkit-XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw Failure("cannot create a private directory under \(base): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Whether `path` is a directory (not a link) of this user's, that only they can use.
    static func isPrivateFolder(_ path: String) -> Bool {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return info.st_uid == getuid() && info.st_mode & 0o077 == 0
    }

    /// A random name for a forwarded socket: nobody can guess it to squat it first.
    package static func randomName(prefix: String) throws(Failure) -> String {
        let bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(8) } catch { throw Failure("no randomness for a socket name: \(error)") }
        return prefix + bytes.map { String($0, radix: 16).leftPadded(2) }.joined()
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
