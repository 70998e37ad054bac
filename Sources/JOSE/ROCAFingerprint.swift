/// The fingerprint of RSA moduli made by Infineon's flawed key generator (ROCA,
/// CVE-2017-15361; Nemec et al., CCS 2017).
///
/// Its primes have the form k·M + (65537^a mod M), M a product of small primes, so for every
/// small prime p dividing M, n mod p lies in the subgroup that 65537 generates modulo p. A
/// random modulus passes that test for all 38 odd primes up to 167 with probability about
/// 10⁻⁹; a ROCA modulus always does, and its private key can be recovered. Such keys are
/// refused.
enum ROCAFingerprint {
    /// For each odd prime up to 167 (all of which divide M for every key size), the residues
    /// 65537^a mod p.
    private static let subgroups: [(prime: UInt32, members: Set<UInt32>)] = {
        let primes: [UInt32] = [
            3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
            101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167,
        ]
        return primes.map { prime in
            var members: Set<UInt32> = []
            var residue: UInt32 = 1
            repeat {
                members.insert(residue)
                residue = residue * (65537 % prime) % prime
            } while residue != 1
            return (prime, members)
        }
    }()

    /// True when the big-endian modulus `n` has the ROCA fingerprint.
    static func matches(modulus n: [UInt8]) -> Bool {
        for (prime, members) in subgroups {
            var remainder: UInt32 = 0
            for byte in n { remainder = (remainder << 8 | UInt32(byte)) % prime }
            if !members.contains(remainder) { return false }
        }
        return true
    }
}
