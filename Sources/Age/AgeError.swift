/// Why an age file, key or identity file could not be used, in words a user can act on.
///
/// No case carries key material or plaintext: reasons are fixed phrases, and the only values
/// are counts, line numbers and work factors.
package enum AgeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input does not start as an age file (nor as an armored one).
    case notAgeFile
    /// An age file of a version this code does not read (C2SP age, "Header": only `v1`).
    case unsupportedVersion
    /// The ASCII armor is malformed (C2SP age, "ASCII armor").
    case malformedArmor(String)
    /// The header breaks a rule of the format; the file is damaged or was not written by age.
    case malformedHeader(String)
    /// An scrypt stanza asks for more work than this reader accepts.
    case workFactorTooLarge(log2N: Int, limit: Int)
    /// The header's MAC does not match: the header was changed after it was written.
    case headerMACMismatch
    /// None of the identities given opens any recipient stanza of the file.
    case noIdentityMatches
    /// The file is passphrase-encrypted and the passphrase does not open it.
    case wrongPassphrase
    /// The payload is truncated, altered or followed by extra data.
    case damagedPayload(String)
    /// A recipient (`age1…`) or identity (`AGE-SECRET-KEY-1…`) string is malformed.
    case malformedKey(String)
    /// An identity file has a line that is neither a comment nor an identity.
    case malformedIdentityFile(line: Int, reason: String)
    /// A passphrase cannot be used (empty).
    case unusablePassphrase(String)
    /// OpenSSL's libcrypto is missing or refused an operation.
    case cryptoFailure(String)

    package var description: String {
        switch self {
        case .notAgeFile:
            return "not an age file (it does not start with the age-encryption.org/v1 header)"
        case .unsupportedVersion:
            return "the file is in an age format version this program does not read (only age-encryption.org/v1)"
        case .malformedArmor(let reason):
            return "the armored age file is damaged: \(reason)"
        case .malformedHeader(let reason):
            return "the age file is damaged: its header is malformed (\(reason))"
        case .workFactorTooLarge(let log2N, let limit):
            return "the passphrase-encrypted file asks for an scrypt work factor of 2^\(log2N), above the limit of 2^\(limit); "
                + "it was not made by age with its defaults, and opening it could take minutes and gigabytes"
        case .headerMACMismatch:
            return "the age file is damaged or was tampered with: its header does not match its authentication code"
        case .noIdentityMatches:
            return "no identity given matches this age file (it was encrypted to other recipients)"
        case .wrongPassphrase:
            return "wrong passphrase"
        case .damagedPayload(let reason):
            return "the age file is damaged or was tampered with: \(reason)"
        case .malformedKey(let reason):
            return "malformed age key: \(reason)"
        case .malformedIdentityFile(let line, let reason):
            return "the identity file is malformed at line \(line): \(reason)"
        case .unusablePassphrase(let reason):
            return "unusable passphrase: \(reason)"
        case .cryptoFailure(let message):
            return "cryptography failed: \(message)"
        }
    }
}
