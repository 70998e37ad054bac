/// Whether a sign-in binds its tokens to a key (DPoP, RFC 9449): the profile's `dpop`, or
/// `login --dpop`.
public enum DPoPMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// When the provider's discovery lists ES256 in `dpop_signing_alg_values_supported` (the
    /// default).
    case auto
    /// Always: a provider that lists DPoP algorithms without ES256 is an error; one that lists
    /// none is sent proofs anyway (some support DPoP without saying so).
    case always
    /// Never: bearer tokens.
    case never

    public var description: String { rawValue }
}
