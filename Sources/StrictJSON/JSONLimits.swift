/// Bounds on what ``JSONValue/init(parsing:limits:)-(Collection<UInt8>,_)`` accepts.
public struct JSONLimits: Sendable, Equatable {
    /// The longest document accepted, in bytes.
    public var maximumBytes: Int
    /// The deepest nesting of arrays and objects accepted.
    public var maximumDepth: Int

    /// Limits of `maximumBytes` bytes and `maximumDepth` nested arrays and objects.
    public init(maximumBytes: Int = 4 << 20, maximumDepth: Int = 64) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
    }

    /// 4 MiB, 64 levels: roomy for discovery documents, key sets and token responses.
    public static let `default` = JSONLimits()
}
