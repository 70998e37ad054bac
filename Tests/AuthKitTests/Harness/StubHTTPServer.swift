import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A scripted HTTP/1.1 server on 127.0.0.1 for tests that need exact control over what a
/// peer answers (malformed bodies, delays, dropped connections). Real providers are used
/// wherever behaviour, not wire-level misbehaviour, is under test.
final class StubHTTPServer: Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        var query: String?
        var headers: [(String, String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    indirect enum Action: Sendable {
        case respond(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        case delay(milliseconds: Int64, then: Action)
        case closeConnection

        static func json(_ status: Int, _ text: String, headers: [(String, String)] = []) -> Action {
            .respond(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
        }
        static func text(_ status: Int, _ text: String) -> Action {
            .respond(status: status, headers: [("Content-Type", "text/plain")], body: Array(text.utf8))
        }
    }

    typealias Handler = @Sendable (Request) -> Action

    let port: Int
    private let channel: Channel
    private let recorded: RequestLog

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var requests: [Request] { recorded.all }

    private init(port: Int, channel: Channel, recorded: RequestLog) {
        self.port = port
        self.channel = channel
        self.recorded = recorded
    }

    static func start(_ handler: @escaping Handler) async throws -> StubHTTPServer {
        let recorded = RequestLog()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(StubHandler(handler: handler, recorded: recorded))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = channel.localAddress?.port else { throw StubError.noPort }
        return StubHTTPServer(port: port, channel: channel, recorded: recorded)
    }

    func stop() async {
        try? await channel.close().get()
    }

    enum StubError: Error { case noPort }
}

private final class StubHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let handler: StubHTTPServer.Handler
    let recorded: RequestLog
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(handler: @escaping StubHTTPServer.Handler, recorded: RequestLog) {
        self.handler = handler
        self.recorded = recorded
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(var buffer):
            body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end:
            guard let head else { return }
            let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            let request = StubHTTPServer.Request(
                method: head.method.rawValue,
                path: String(parts[0]),
                query: parts.count > 1 ? String(parts[1]) : nil,
                headers: head.headers.map { ($0.name, $0.value) },
                body: body)
            recorded.append(request)
            perform(handler(request), context: context)
        }
    }

    private func perform(_ action: StubHTTPServer.Action, context: ChannelHandlerContext) {
        switch action {
        case .closeConnection:
            context.close(promise: nil)
        case .delay(let milliseconds, let next):
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(milliseconds)) {
                let (handler, context) = loopBound.value
                handler.perform(next, context: context)
            }
        case .respond(let status, let headers, let body):
            var fields = HTTPHeaders(headers)
            fields.replaceOrAdd(name: "Content-Length", value: String(body.count))
            let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: fields)
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            var buffer = context.channel.allocator.buffer(capacity: body.count)
            buffer.writeBytes(body)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}

/// The requests a stub server received, in order.
final class RequestLog: Sendable {
    private let entries = Mutex<[StubHTTPServer.Request]>([])
    func append(_ request: StubHTTPServer.Request) { entries.withLock { $0.append(request) } }
    var all: [StubHTTPServer.Request] { entries.withLock { $0 } }
}
