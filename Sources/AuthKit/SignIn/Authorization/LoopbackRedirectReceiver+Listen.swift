import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

extension LoopbackRedirectReceiver {
    /// Listens on 127.0.0.1 on `port` (or one the OS chooses) and, for a `localhost` redirect,
    /// on [::1] on the same port: browsers try `::1` first for `localhost`, and another local
    /// user listening there would get the start link and the callback. A port whose [::1]
    /// side is taken is given up for another (or, when named, refused); a machine without
    /// IPv6 loopback has nobody else listening there either.
    static func listen(
        state: CallbackReceiverCore, limits: Limits, host: RedirectHost, port wanted: Int?
    ) async throws(AuthorizationError) -> ([any Channel], Int) {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 16)
            // A fixed port is free again while the last sign-in's connections linger.
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                let id = state.connectionOpened(child)
                child.closeFuture.whenComplete { _ in state.connectionClosed(id) }
                // A whole request within requestTimeout, or the connection goes.
                let deadline = child.eventLoop.scheduleTask(in: limits.requestTimeout) {
                    if !state.hasCompleteRequest(id) { child.close(promise: nil) }
                }
                child.closeFuture.whenComplete { _ in deadline.cancel() }
                return child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try child.pipeline.syncOperations.addHandlers([CallbackHTTPHandler(state: state, connection: id)])
                }
            }
        for _ in 0..<(wanted == nil ? 8 : 1) {
            let channel: any Channel
            do {
                channel = try await bootstrap.bind(host: "127.0.0.1", port: wanted ?? 0).get()
            } catch {
                if let wanted { throw .cannotListen("port \(wanted) (redirect_port) is not free on 127.0.0.1: \(error)") }
                throw .cannotListen("\(error)")
            }
            guard let port = channel.localAddress?.port else {
                try? await channel.close().get()
                throw .cannotListen("the OS assigned no port")
            }
            guard host == .localhost else { return ([channel], port) }
            do {
                return ([channel, try await bootstrap.bind(host: "::1", port: port).get()], port)
            } catch let error as IOError where error.errnoCode == EADDRINUSE {
                try? await channel.close().get()
                if wanted != nil {
                    throw .cannotListen("port \(port) (redirect_port) is taken on [::1], where browsers look first for localhost")
                }
            } catch {
                return ([channel], port)  // no IPv6 loopback here
            }
        }
        throw .cannotListen("every port tried was taken on [::1], where browsers look first for localhost")
    }
}
