import NIOCore

/// Splits the byte stream into request lines, each of bounded length and arriving within a
/// bounded time: a client that trickles a line byte by byte, or sends a partial line and
/// waits, loses its connection instead of holding a place (and memory) in the agent.
struct AgentLineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    struct Oversized: Error {}
    struct TooSlow: Error {}

    static let maximumRequestBytes = AgentMessage.maximumRequestBytes
    /// How long a request line may take from its first byte to its newline.
    static let lineTimeout: TimeAmount = .seconds(5)

    let deadline: TimeAmount
    /// When the first byte of the line not yet complete arrived.
    private var partialSince: NIODeadline?

    init(deadline: TimeAmount) {
        self.deadline = deadline
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if let newline = buffer.readableBytesView.firstIndex(of: 0x0A) {
            let length = newline - buffer.readerIndex
            guard length <= Self.maximumRequestBytes, let line = buffer.readSlice(length: length) else { throw Oversized() }
            buffer.moveReaderIndex(forwardBy: 1)
            partialSince = nil
            context.fireChannelRead(Self.wrapInboundOut(line))
            return .continue
        }
        guard buffer.readableBytes <= Self.maximumRequestBytes else { throw Oversized() }
        if buffer.readableBytes > 0 {
            let now = NIODeadline.now()
            if let since = partialSince {
                guard now - since <= deadline else { throw TooSlow() }
            } else {
                partialSince = now
            }
        }
        return .needMoreData
    }
}
