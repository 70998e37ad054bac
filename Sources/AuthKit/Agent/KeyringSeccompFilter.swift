/// A seccomp filter, as bubblewrap's `--seccomp FD` loads it (a classic BPF program, the
/// `struct sock_filter` array in this machine's byte order): `add_key`, `request_key` and
/// `keyctl` fail with `EPERM`, everything else is allowed.
///
/// Why: kernel keys are checked against the user's uid across user namespaces, so a sandbox of
/// the same user that may call keyctl can ask for the persistent keyring (or link the user
/// keyring into its session keyring) and possess — read — the keys authkit keeps there: the
/// kernel-keyring store's sign-ins, the encrypted store's unlocked identity. Denying the three
/// calls leaves the sandbox only what its forwarded agent socket hands out.
///
/// Both ABIs a process of this machine can call the kernel with are covered (x86-64 with x32,
/// and i386; or arm64 and 32-bit arm); a call of any other architecture is refused.
package enum KeyringSeccompFilter {
    /// `SECCOMP_RET_ALLOW`.
    static let allow: UInt32 = 0x7fff_0000
    /// `SECCOMP_RET_ERRNO | EPERM`.
    static let denied: UInt32 = 0x0005_0000 | 1
    /// `SECCOMP_RET_KILL_PROCESS`.
    static let kill: UInt32 = 0x8000_0000

    /// An architecture (`AUDIT_ARCH_*`) and its `add_key`, `request_key`, `keyctl` numbers.
    struct ABI {
        var architecture: UInt32
        var calls: [UInt32]
        /// x32 system calls carry this bit on x86-64.
        var maskedBit: UInt32 = 0
    }

    static var abis: [ABI] {
        #if arch(x86_64)
        [
            ABI(architecture: 0xC000_003E, calls: [248, 249, 250], maskedBit: 0x4000_0000),
            ABI(architecture: 0x4000_0003, calls: [286, 287, 288]),
        ]
        #elseif arch(arm64)
        [ABI(architecture: 0xC000_00B7, calls: [217, 218, 219]), ABI(architecture: 0x4000_0028, calls: [309, 310, 311])]
        #else
        []
        #endif
    }

    /// One instruction: code, jump if true, jump if false, constant.
    struct Instruction: Equatable {
        var code: UInt16
        var jt: UInt8 = 0
        var jf: UInt8 = 0
        var k: UInt32 = 0
    }

    // BPF opcodes.
    static let loadWord: UInt16 = 0x20  // BPF_LD | BPF_W | BPF_ABS
    static let jumpEqual: UInt16 = 0x15  // BPF_JMP | BPF_JEQ | BPF_K
    static let andConstant: UInt16 = 0x54  // BPF_ALU | BPF_AND | BPF_K
    static let returnConstant: UInt16 = 0x06  // BPF_RET | BPF_K

    /// The program: per ABI, "is it this architecture? then is it one of the three calls?".
    static func program(_ abis: [ABI] = abis) -> [Instruction] {
        var program = [Instruction(code: loadWord, k: 4)]  // seccomp_data.arch
        for abi in abis {
            var block = [Instruction(code: loadWord, k: 0)]  // seccomp_data.nr
            if abi.maskedBit != 0 { block.append(Instruction(code: andConstant, k: ~abi.maskedBit)) }
            for (index, call) in abi.calls.enumerated() {
                // Match: jump to the refusal after the remaining comparisons and the allow.
                block.append(Instruction(code: jumpEqual, jt: UInt8(abi.calls.count - index), k: call))
            }
            block.append(Instruction(code: returnConstant, k: allow))
            block.append(Instruction(code: returnConstant, k: denied))
            program.append(Instruction(code: jumpEqual, jt: 0, jf: UInt8(block.count), k: abi.architecture))
            program += block
        }
        program.append(Instruction(code: returnConstant, k: kill))
        return program
    }

    /// The program's bytes, as `seccomp_export_bpf` writes them.
    package static func bytes() -> [UInt8] {
        var output: [UInt8] = []
        for instruction in program() {
            withUnsafeBytes(of: instruction.code) { output += $0 }
            output += [instruction.jt, instruction.jf]
            withUnsafeBytes(of: instruction.k) { output += $0 }
        }
        return output
    }
}
