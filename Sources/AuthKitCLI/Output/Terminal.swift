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
    /// Writes `text` and a newline to standard error (ASCII typography where
    /// ``Voice/asciiOnly(fd:)`` says so).
    static func printError(_ text: String) {
        var safe = ProviderText.displayable(text)
        if Voice.asciiOnly(fd: 2) { safe = Voice.ascii(safe) }
        write(fd: 2, safe.hasSuffix("\n") ? safe : safe + "\n")
    }

    /// Writes text for a person and a newline to standard output (ASCII typography where
    /// ``Voice/asciiOnly(fd:)`` says so).
    static func printOut(_ text: String) {
        var safe = ProviderText.displayable(text)
        if Voice.asciiOnly(fd: 1) { safe = Voice.ascii(safe) }
        write(fd: 1, safe.hasSuffix("\n") ? safe : safe + "\n")
    }

    /// Writes data for a program (JSON, TSV, shell snippets, scripts) and a newline to
    /// standard output: made displayable, never rewritten otherwise.
    static func printData(_ text: String) {
        let safe = ProviderText.displayable(text)
        write(fd: 1, safe.hasSuffix("\n") ? safe : safe + "\n")
    }

    /// Writes `text` as is (no newline added) to the descriptor, retrying short writes.
    static func write(fd: Int32, _ text: String) {
        writeBytes(fd: fd, Array(text.utf8))
    }

    /// Writes `bytes` as they are (binary data for a program), retrying short writes.
    static func writeBytes(fd: Int32, _ data: [UInt8]) {
        var bytes = data
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

    /// The width of the terminal on standard output (TIOCGWINSZ), else `COLUMNS`, else none
    /// (output to a file or pipe is not cut).
    static var columns: Int? {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = getenv("COLUMNS"), let value = Int(String(cString: text)), value > 0 { return value }
        return nil
    }
}
