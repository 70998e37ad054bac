import AuthKit

#if canImport(Glibc)
import Glibc
#endif

/// Writing to the terminal. The only place in authkit that prints.
///
/// The output boundary: every line written with ``printError(_:)`` or ``printOut(_:)`` passes
/// ``ProviderText/displayable(_:)``, so no text from outside (a claim, a Graph field, a stored
/// value, a callback parameter, a flag's value) reaches the terminal as a control or
/// bidirectional character, whichever path it took. ``write(fd:_:)`` is for authkit's own
/// control sequences (the spinner) and protocol answers whose every byte is checked already.
///
/// Writes go straight to the file descriptors (no stdio buffering), so output interleaves
/// correctly with child processes and is complete even when the process exits right after.
enum Terminal {
    /// Writes `text` and a newline to standard error.
    static func printError(_ text: String) {
        let safe = ProviderText.displayable(text)
        write(fd: 2, safe.hasSuffix("\n") ? safe : safe + "\n")
    }

    /// Writes `text` and a newline to standard output.
    static func printOut(_ text: String) {
        let safe = ProviderText.displayable(text)
        write(fd: 1, safe.hasSuffix("\n") ? safe : safe + "\n")
    }

    /// Writes `text` as is (no newline added) to the descriptor, retrying short writes.
    static func write(fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// True when standard error is a terminal (spinners and colours only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }
    /// True when standard output is a terminal.
    static var stdoutIsTerminal: Bool { isatty(1) == 1 }
}
