import ArgumentParser

/// The exit codes of `authkit`, in the spirit of gh's. Documented in the README ("Exit codes");
/// scripts depend on them, so a code never changes meaning.
enum ExitStatus {
    /// Success: signed in and usable, token printed, token verified.
    static let success = ExitCode(0)
    /// Not signed in, or the sign-in can no longer be used: run `authkit login`.
    static let loginNeeded = ExitCode(1)
    /// Usage or configuration error (bad flag, bad config file): nothing was attempted.
    static let usage = ExitCode(2)
    /// The token store is unavailable: no D-Bus session, no Secret Service, collection locked,
    /// unlock dismissed.
    static let storageUnavailable = ExitCode(3)
    /// The identity provider or Graph could not be reached or answered with an error.
    static let providerError = ExitCode(4)
    /// `jwt verify`: the token is malformed, or its signature or key is not acceptable.
    static let signatureRejected = ExitCode(5)
    /// `jwt verify`: the signature is good but the claims are not (expired, wrong audience …).
    static let claimsRejected = ExitCode(6)
    /// The provider rejected the configuration (`invalid_client`: an unknown client id or a
    /// wrong secret), unlike an outage (4): fix the settings, not the network.
    static let configurationRejected = ExitCode(7)
    /// `token`: even a fresh token from the provider lives less than `--min-ttl`.
    static let tokenTooShort = ExitCode(8)
    /// `unlock`, `login --storage encrypted-file`: the passphrase does not open the encrypted
    /// store's identity; nothing was changed.
    static let wrongPassphrase = ExitCode(9)
    /// The agent refused: its (forwarded) socket does not serve that, a group's `allow` list
    /// does not name the asker, or the person asked said no.
    static let refused = ExitCode(10)
    /// `request`: the server answered HTTP 400 or more (as curl --fail's 22).
    static let httpError = ExitCode(22)
}
