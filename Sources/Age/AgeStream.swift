/// age's payload encryption (C2SP age, "Payload"): STREAM over ChaCha20-Poly1305 with 64 KiB
/// chunks, the nonce an 11-byte big-endian chunk counter and a last-chunk flag byte (1 on the
/// last chunk). The last chunk may be full; it may be empty only when the whole plaintext is;
/// nothing may follow it.
package enum AgeStream {
    package static let chunkSize = 64 * 1024
    package static let sealedChunkSize = chunkSize + ChaChaPoly.tagLength

    /// `plaintext` encrypted under the payload key.
    package static func encrypt(key: SecretBytes, _ plaintext: some Collection<UInt8>) throws(AgeError) -> [UInt8] {
        let input = Array(plaintext)
        let chunks = max(1, (input.count + chunkSize - 1) / chunkSize)
        var output: [UInt8] = []
        output.reserveCapacity(input.count + chunks * ChaChaPoly.tagLength)
        for index in 0..<chunks {
            let start = index * chunkSize
            let end = min(start + chunkSize, input.count)
            output += try ChaChaPoly.seal(key: key, nonce: nonce(index, last: index == chunks - 1), input[start..<end])
        }
        return output
    }

    /// The plaintext of `payload` (what follows the 16-byte payload nonce), or
    /// ``AgeError/damagedPayload(_:)`` — and never any of the plaintext — when a chunk fails
    /// to authenticate, the last chunk is missing, or data follows it.
    package static func decrypt(key: SecretBytes, _ payload: ArraySlice<UInt8>) throws(AgeError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(payload.count)
        var offset = payload.startIndex
        var index = 0
        do throws(AgeError) {
            while true {
                let remaining = payload.endIndex - offset
                guard remaining > 0 else {
                    throw AgeError.damagedPayload(
                        index == 0 ? "the payload is missing" : "the payload is truncated (its last chunk is missing)")
                }
                if remaining < sealedChunkSize {
                    // A short chunk can only be the last one, and it is empty only when it is
                    // the only one.
                    guard index == 0 || remaining > ChaChaPoly.tagLength else {
                        throw AgeError.damagedPayload("the last chunk is empty")
                    }
                    guard let chunk = try ChaChaPoly.open(key: key, nonce: nonce(index, last: true), payload[offset...]) else {
                        throw AgeError.damagedPayload(unauthenticated)
                    }
                    output += chunk
                    return output
                }
                let sealed = payload[offset..<(offset + sealedChunkSize)]
                offset += sealedChunkSize
                if let chunk = try ChaChaPoly.open(key: key, nonce: nonce(index, last: false), sealed) {
                    output += chunk
                } else if let chunk = try ChaChaPoly.open(key: key, nonce: nonce(index, last: true), sealed) {
                    // A full last chunk: nothing may follow.
                    guard offset == payload.endIndex else { throw AgeError.damagedPayload("data follows the last chunk") }
                    output += chunk
                    return output
                } else {
                    throw AgeError.damagedPayload(unauthenticated)
                }
                index += 1
            }
        } catch {
            SecretBytes.wipe(&output)
            throw error
        }
    }

    private static let unauthenticated = "a payload chunk does not authenticate"

    /// The nonce of chunk `index`: 11-byte big-endian counter, then the last-chunk flag.
    private static func nonce(_ index: Int, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: ChaChaPoly.nonceLength)
        let counter = UInt64(index)
        for byte in 0..<8 { nonce[10 - byte] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * byte)) }
        nonce[11] = last ? 1 : 0
        return nonce
    }
}
