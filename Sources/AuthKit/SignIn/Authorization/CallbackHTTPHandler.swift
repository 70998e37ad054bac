import NIOCore
import NIOHTTP1

/// Reads one HTTP request at a time and hands GETs to the ``CallbackReceiverCore``.
final class CallbackHTTPHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: CallbackReceiverCore
    private let connection: CallbackReceiverCore.Machine.ConnectionID
    private var head: HTTPRequestHead?
    private var bodyBytes = 0
    private var rejected: CallbackReply?

    init(state: CallbackReceiverCore, connection: CallbackReceiverCore.Machine.ConnectionID) {
        self.state = state
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            bodyBytes = 0
            rejected = nil
            if head.method != .GET {
                rejected = .init(status: .methodNotAllowed, title: "Method not allowed", message: "Only GET is served here.")
            } else if head.uri.utf8.count > state.limits.maxTargetBytes {
                rejected = .init(status: .uriTooLong, title: "Request too long", message: "The request is too long.")
            }
        case .body(let buffer):
            bodyBytes += buffer.readableBytes
            if bodyBytes > state.limits.maxBodyBytes, rejected == nil {
                rejected = .init(status: .payloadTooLarge, title: "Too large", message: "The request is too large.")
                write(rejected!, context: context)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            state.requestCompleted(connection)
            if let rejected {
                // A body that was too large was answered (and the connection closed) already.
                if rejected.status != .payloadTooLarge { write(rejected, context: context) }
                return
            }
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let eventLoop = context.eventLoop
            state.receive(target: head.uri, cookies: head.headers["Cookie"], host: head.headers["Host"]) { reply in
                eventLoop.execute {
                    let (handler, context) = loopBound.value
                    handler.write(reply, context: context)
                }
            }
        }
    }

    private func write(_ reply: CallbackReply, context: ChannelHandlerContext) {
        guard context.channel.isActive else {
            reply.afterWrite?()
            return
        }
        let body = Array(CallbackPage.html(title: reply.title, message: reply.message).utf8)
        var headers = NIOHTTP1.HTTPHeaders()
        headers.add(name: "Content-Type", value: "text/html; charset=utf-8")
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "Connection", value: "close")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Content-Security-Policy", value: CallbackPage.contentSecurityPolicy)
        if let location = reply.location { headers.add(name: "Location", value: location) }
        if let cookie = reply.cookie { headers.add(name: "Set-Cookie", value: cookie) }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: reply.status, headers: headers))), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: body.count)
        buffer.writeBytes(body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        let afterWrite = reply.afterWrite
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            afterWrite?()
            channel.close(promise: nil)
        }
    }
}
