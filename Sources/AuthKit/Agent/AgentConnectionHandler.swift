import NIOCore

/// Hands each line to the core; closes an idle connection that waits for nothing.
final class AgentConnectionHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let core: AgentCore
    let connection: AgentStateMachine.Connection

    init(core: AgentCore, connection: AgentStateMachine.Connection) {
        self.core = core
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = Array(unwrapInboundIn(data).readableBytesView)
        let core = self.core
        let connection = self.connection
        Task { await core.receive(line, from: connection) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            let connection = self.connection
            let core = self.core
            let channel = context.channel
            Task { if await !core.isWaiting(connection) { try? await channel.close() } }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is AgentLineDecoder.Oversized {
            let reply = AgentMessage.encode(
                AgentResponse.failure(.badRequest("the request is longer than \(AgentLineDecoder.maximumRequestBytes) bytes")))
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply)), promise: nil)
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        let core = self.core
        let connection = self.connection
        Task { await core.closed(connection) }
        context.fireChannelInactive()
    }
}
