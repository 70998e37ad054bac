import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A sign-in's DPoP key (RFC 9449): a P-256 key made for that sign-in alone, in a TPM when
/// there is one (``TPMChoice``), else in memory and then in the chosen store — in an item of
/// its own (kind `dpop-key`), never in the item holding the refresh token, never in argv, a
/// file, a log or the agent's wire.
///
/// What is stored is checked like anything from outside: it must be a whole key, and the key
/// the sign-in's record names by thumbprint (`dpop_jkt`).
package struct DPoPKey: Sendable {
    package let key: SigningKey
    /// The key's RFC 7638 thumbprint: the `jkt` the provider binds the tokens to.
    package let thumbprint: String

    init(key: SigningKey) throws(DPoPError) {
        self.key = key
        do { thumbprint = try key.publicKey.thumbprint() } catch { throw .keyUnavailable("\(error)") }
    }

    /// Where the private key is, for `status`: `TPM (device:/dev/tpmrm0)` or `store`.
    package var place: String {
        switch key.location {
        case .tpm: return "tpm"
        case .memory: return "store"
        }
    }

    /// A new key where `choice` says. With ``TPMChoice/auto``, a TPM that is there but cannot be
    /// used gives a key in memory and a warning naming why.
    package static func make(_ choice: TPMChoice) throws(DPoPError) -> (DPoPKey, warning: String?) {
        var warning: String?
        if let tcti = choice.tcti {
            do {
                return (try DPoPKey(key: SigningKey.generate(in: TPM.open(tcti: tcti))), nil)
            } catch let error as JOSEError {
                guard choice == .auto else { throw .keyUnavailable("\(error) (AUTHKIT_TPM=\(tcti))") }
                warning =
                    "the TPM cannot be used (\(error)); the sign-in's DPoP key is kept in the store instead — set AUTHKIT_TPM=off to stop trying"
            } catch {
                throw .keyUnavailable("\(error)")
            }
        }
        do { return (try DPoPKey(key: SigningKey.generate()), warning) } catch { throw .keyUnavailable("\(error)") }
    }

    /// The item's secret: `{"version":1,"jkt":…,"jwk":{…}}` for a key in memory,
    /// `{"version":1,"jkt":…,"tpm":{"tcti":…,"blob":…}}` for a TPM's.
    package func stored() throws(DPoPError) -> [UInt8] {
        var object = JSONObject()
        object["version"] = .number(1)
        object["jkt"] = .string(thumbprint)
        switch key.location {
        case .memory:
            guard let jwk = key.privateJWK else { throw .keyUnavailable("the key cannot be written") }
            object["jwk"] = .object(jwk)
        case .tpm:
            guard let blob = key.tpmBlob, let tcti = key.tpmTCTI else { throw .keyUnavailable("the TPM did not give the key's blob") }
            var tpm = JSONObject()
            tpm["tcti"] = .string(tcti)
            tpm["blob"] = .string(String(decoding: blob, as: UTF8.self))
            object["tpm"] = .object(tpm)
        }
        return JSONValue.object(object).serializedBytes()
    }

    /// Reads a stored key and checks it is the one `thumbprint` names.
    package static func read(_ bytes: [UInt8], thumbprint expected: String, account: String, allowedTCTIs: Set<String>) throws(DPoPError)
        -> DPoPKey
    {
        guard case .object(let object)? = try? JSONValue(parsing: bytes), object["version"] == .number(1) else {
            throw .keyUnavailable("the stored key is not one authkit wrote")
        }
        let key: SigningKey
        do {
            if case .object(let jwk)? = object["jwk"] {
                key = try SigningKey(privateJWK: jwk)
            } else if case .object(let tpm)? = object["tpm"], let tcti = tpm["tcti"]?.stringValue, let blob = tpm["blob"]?.stringValue {
                guard allowedTCTIs.contains(tcti) else {
                    throw DPoPError.keyUnavailable(
                        "the stored key names a TPM authkit was not told to use (\(ProviderText.clean(tcti, limit: 80) ?? "?")): set AUTHKIT_TPM to it"
                    )
                }
                key = try SigningKey(tpmBlob: Array(blob.utf8), tpm: TPM.open(tcti: tcti))
            } else {
                throw DPoPError.keyUnavailable("the stored key is neither a key nor a TPM's blob")
            }
        } catch let error as DPoPError {
            throw error
        } catch {
            throw .keyUnavailable("\(error)")
        }
        let read = try DPoPKey(key: key)
        guard read.thumbprint == expected, object["jkt"]?.stringValue == expected else { throw .keyMismatch(account: account) }
        return read
    }
}

/// Where a new DPoP key goes: `AUTHKIT_TPM` — `auto` (the default: the kernel's TPM resource
/// manager `/dev/tpmrm0` when it exists, else the store), `off`, or a TCTI (`device:/dev/tpmrm0`,
/// `swtpm:path=/run/swtpm/sock`), which must then work.
package enum TPMChoice: Sendable, Equatable {
    case auto
    case off
    case tcti(String)

    package static let device = "device:/dev/tpmrm0"

    package init(environment: [String: String]) throws(ConfigurationError) {
        switch environment["AUTHKIT_TPM"] ?? "" {
        case "", "auto": self = .auto
        case "off", "never", "no", "0": self = .off
        case let value where Self.isTCTI(value): self = .tcti(value)
        case let value:
            throw ConfigurationError(
                location: "environment variable AUTHKIT_TPM", key: "AUTHKIT_TPM",
                problem: "‘\(ProviderText.clean(value, limit: 80) ?? "?")’ is not auto, off or a TCTI such as device:/dev/tpmrm0")
        }
    }

    /// The TCTI to try: the named one, or the resource manager when `auto` finds it.
    var tcti: String? {
        switch self {
        case .off: return nil
        case .tcti(let tcti): return tcti
        case .auto: return FileManager.default.fileExists(atPath: "/dev/tpmrm0") ? Self.device : nil
        }
    }

    /// `device:PATH`, `swtpm:…`, `mssim:…` or `tabrmd:…`: printable, no spaces, bounded.
    static func isTCTI(_ text: String) -> Bool {
        let kinds = ["device:", "swtpm:", "mssim:", "tabrmd:"]
        return kinds.contains { text.hasPrefix($0) } && text.utf8.count <= 256 && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
