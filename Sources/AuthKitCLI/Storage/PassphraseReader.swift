import Age
import AuthKit
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

/// Reads the encrypted store's passphrase: from the terminal without echo, or — for scripts —
/// one line a file descriptor names (`--passphrase-fd N`). Never from argv or the environment,
/// never printed. Reads block, so they run on a thread of their own.
struct PassphraseReader {
    /// Why no passphrase was read.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The descriptor `--passphrase-fd` named, or nil for the terminal.
    var fd: Int32?

    /// One passphrase, asked with `prompt` on the terminal.
    func read(prompt: String) async throws(Failure) -> SecretBytes {
        let fd = self.fd
        let result = await OwnThread.run { () -> Result<SecretBytes, Failure> in
            if let fd { return Self.line(from: fd) }
            return Self.fromTerminal(prompt)
        }
        return try result.get()
    }

    /// A new passphrase: asked twice on the terminal (the two must match), or one line from the
    /// descriptor.
    func readNew() async throws(Failure) -> SecretBytes {
        let first = try await read(prompt: "New passphrase for the encrypted token store: ")
        guard fd == nil else { return first }
        let second = try await read(prompt: "The same passphrase again: ")
        guard first.isEqual(to: second) else { throw Failure(description: "the two passphrases differ; nothing was changed") }
        return first
    }

    /// One line from `fd` (without its line end); the descriptor stays open for a next line.
    private static func line(from fd: Int32) -> Result<SecretBytes, Failure> {
        var bytes: [UInt8] = []
        defer { SecretBytes.wipe(&bytes) }
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 {
                if errno == EINTR { continue }
                return .failure(
                    Failure(description: "cannot read the passphrase from descriptor \(fd): \(String(cString: strerror(errno)))"))
            }
            if count == 0 || byte == 0x0A { break }
            bytes.append(byte)
            guard bytes.count <= 4096 else { return .failure(Failure(description: "the passphrase is longer than 4096 bytes")) }
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        guard !bytes.isEmpty else { return .failure(Failure(description: "the passphrase from descriptor \(fd) is empty")) }
        return .success(SecretBytes(bytes))
    }

    /// One line typed on the controlling terminal, echo off and restored afterwards (the
    /// line discipline stays canonical, so the newline still ends the line).
    private static func fromTerminal(_ prompt: String) -> Result<SecretBytes, Failure> {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else {
            return .failure(
                Failure(description: "no terminal to ask for the passphrase on; pass it on a descriptor with --passphrase-fd N"))
        }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else {
            return .failure(Failure(description: "cannot turn off the terminal's echo; pass the passphrase with --passphrase-fd N"))
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        quiet.c_lflag |= tcflag_t(ECHONL)
        // Echo goes off (dropping what was typed before the question) before the prompt shows:
        // an answer typed as soon as the prompt appears is read, never flushed away.
        guard tcsetattr(tty, TCSAFLUSH, &quiet) == 0 else {
            return .failure(Failure(description: "cannot turn off the terminal's echo; pass the passphrase with --passphrase-fd N"))
        }
        defer { _ = tcsetattr(tty, TCSADRAIN, &saved) }
        _ = Array(prompt.utf8).withUnsafeBytes { Glibc.write(tty, $0.baseAddress, $0.count) }
        return line(from: tty).mapError { _ in Failure(description: "no passphrase was typed; nothing was changed") }
    }
}
