import CCryptoLoader
import COpenSSL
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TPM 2.0 reached through the `tpm2-openssl` provider (Debian's `tpm2-openssl`) in the
/// libcrypto authkit already opens, in an OpenSSL library context of its own (OpenSSL's default
/// context is never touched). A key made there never leaves it: what is saved is a blob wrapped
/// by the TPM's storage key, which no other TPM can load.
///
/// Which TPM: `tcti` — `device:/dev/tpmrm0` (the kernel's resource manager) by default, or a
/// simulator such as `swtpm:path=/run/swtpm.sock`. One TPM command at a time; the provider is
/// loaded once per process.
public final class TPM: @unchecked Sendable {
    /// The TPM's TCTI (`device:/dev/tpmrm0`, `swtpm:path=…`).
    public let tcti: String
    /// The provider's library context.
    let context: OpaquePointer
    private let providers: [OpaquePointer]
    private let lock = Mutex(())

    private static let opened = Mutex<[String: TPM]>([:])

    /// The TPM `tcti` names, its provider loaded (once per process and TCTI); throws when the
    /// provider or the TPM is not there.
    public static func open(tcti: String = "device:/dev/tpmrm0") throws(JOSEError) -> TPM {
        try CryptoLibrary.requireLoaded()
        // One open at a time: the provider reads its TCTI from the process's environment.
        return try opened.withLock { opened throws(JOSEError) -> TPM in
            if let tpm = opened[tcti] { return tpm }
            let tpm = try load(tcti: tcti)
            opened[tcti] = tpm
            return tpm
        }
    }

    private static func load(tcti: String) throws(JOSEError) -> TPM {
        if tcti.hasPrefix("device:") {
            // "Missing" and "not allowed" reach the provider as one "IO failure": told apart here.
            let path = String(tcti.dropFirst("device:".count))
            let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                throw .signingKey(
                    errno == ENOENT
                        ? "there is no TPM (\(path) does not exist)"
                        : "the TPM \(path) cannot be opened: \(String(cString: strerror(errno))) (members of the tss group may use it)")
            }
            close(fd)
        }
        // tpm2-openssl reads its TCTI from the environment only (OpenSSL 3.0 passes no
        // parameters to a provider it loads), and logs to standard error unless told not to.
        setenv("TPM2OPENSSL_TCTI", tcti, 1)
        setenv("TSS2_LOG", "all+none", 0)
        guard let context = ak_OSSL_LIB_CTX_new() else { throw .signingKey("OpenSSL could not make a library context") }
        // The default provider first: the TPM key's public half is read and checked there.
        guard let base = ak_OSSL_PROVIDER_load(context, "default") else {
            ak_OSSL_LIB_CTX_free(context)
            throw .signingKey("OpenSSL's default provider cannot be loaded: \(CryptoErrors.drain())")
        }
        guard let provider = ak_OSSL_PROVIDER_load(context, "tpm2") else {
            _ = ak_OSSL_PROVIDER_unload(base)
            ak_OSSL_LIB_CTX_free(context)
            throw .signingKey("the TPM cannot be used: \(CryptoErrors.drain()) (Debian: apt-get install tpm2-openssl)")
        }
        return TPM(tcti: tcti, context: context, providers: [provider, base])
    }

    private init(tcti: String, context: OpaquePointer, providers: [OpaquePointer]) {
        self.tcti = tcti
        self.context = context
        self.providers = providers
    }

    deinit {
        for provider in providers { _ = ak_OSSL_PROVIDER_unload(provider) }
        ak_OSSL_LIB_CTX_free(context)
    }

    /// Runs `body` with the library context, one caller at a time.
    func withContext<T>(_ body: (OpaquePointer) throws(JOSEError) -> T) throws(JOSEError) -> T {
        try lock.withLock { _ throws(JOSEError) -> T in try body(context) }
    }

    /// Runs `body` while no other command goes to this TPM.
    func withLock(_ body: () -> Void) {
        lock.withLock { _ in body() }
    }

    /// Puts the variables tpm2-openssl reads (`TPM2OPENSSL_TCTI`, `TSS2_LOG`) into the
    /// environment while the process has one thread: a later ``open(tcti:)`` then only replaces
    /// a value, which never moves the environment under another thread's `getenv` (libcurl's,
    /// for the proxy). Call it first thing in `main` of a program that may open a TPM later.
    public static func prepareEnvironment() {
        _ = given
        setenv("TPM2OPENSSL_TCTI", "device:/dev/tpmrm0", 0)
        setenv("TSS2_LOG", "all+none", 0)
    }

    /// The variables ``prepareEnvironment()`` put into the environment itself (not given by the
    /// process's parent): a program this process runs in its place should not see them.
    package static var variablesSetHere: [String] { ["TPM2OPENSSL_TCTI", "TSS2_LOG"].filter { !given.contains($0) } }

    /// The variables tpm2-openssl reads that the process was given, read before
    /// ``prepareEnvironment()`` sets any.
    private static let given: Set<String> = Set(["TPM2OPENSSL_TCTI", "TSS2_LOG"].filter { getenv($0) != nil })
}
