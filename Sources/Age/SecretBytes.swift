import CCryptoLoader

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Key material (a file key, an X25519 scalar, a passphrase) in memory of its own, wiped with
/// explicit_bzero when the last reference goes: an `Array` could leave copies behind when it
/// grows or is copied on write, this never moves. Immutable once made, hence `Sendable`.
///
/// It has no `description` of its contents: printing one shows only its length.
package final class SecretBytes: Sendable, CustomStringConvertible {
    // The address as a bit pattern: the storage is written only in `init` and `deinit`.
    private let address: UInt
    package let count: Int

    /// Copies `bytes` (the caller wipes its own copy when it matters).
    package init(_ bytes: some Collection<UInt8>) {
        count = bytes.count
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        for (offset, byte) in bytes.enumerated() { storage.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self) }
        address = UInt(bitPattern: storage)
    }

    /// Lets `fill` write `count` fresh bytes (a derived key, random bytes); `nil` when it fails.
    package init?(count: Int, fill: (UnsafeMutableRawBufferPointer) -> Bool) {
        self.count = count
        let storage = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        address = UInt(bitPattern: storage)
        guard fill(UnsafeMutableRawBufferPointer(start: storage, count: count)) else { return nil }
    }

    deinit {
        if let storage = UnsafeMutableRawPointer(bitPattern: address) {
            explicit_bzero(storage, max(count, 1))
            storage.deallocate()
        }
    }

    /// Reads the bytes in place, without copying them.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(AgeError) -> Result) throws(AgeError) -> Result {
        try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: count))
    }

    /// Constant-time comparison (CRYPTO_memcmp).
    package func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return ak_CRYPTO_memcmp(UnsafeRawPointer(bitPattern: address), UnsafeRawPointer(bitPattern: other.address), count) == 0
    }

    package var description: String { "SecretBytes(\(count) bytes)" }

    /// Wipes a scratch array in place (intermediate keys kept in an `Array` for a moment).
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
        }
    }
}
