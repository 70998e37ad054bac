import Foundation

/// Debian's real `age` 1.1.1 (package `age`), which must open what authkit writes and write what
/// authkit reads; it reads passphrases from its terminal only, so ``ptyDriver`` gives it one.
public enum RealAge {
    public static let age = URL(fileURLWithPath: "/usr/bin/age")
    public static let keygen = URL(fileURLWithPath: "/usr/bin/age-keygen")

    /// A Python program that runs `argv[2:]` on a pty of its own, answering each passphrase
    /// prompt with `argv[1]`; what it saw last goes to standard error.
    public static let ptyDriver = """
        import os, pty, sys
        passphrase = sys.argv[1].encode()
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[2], sys.argv[2:])
        seen = b""
        while True:
            try:
                data = os.read(fd, 1024)
            except OSError:
                break
            if not data:
                break
            seen += data
            # A prompt is the last line (after age's cursor-moving escapes), never text a read
            # happened to end in the middle of.
            last = seen.rstrip().rsplit(b"\\n", 1)[-1].rsplit(b"\\x1b[K", 1)[-1].strip()
            if last.endswith(b":") and (last.startswith(b"Enter passphrase") or last.startswith(b"Confirm passphrase")):
                os.write(fd, passphrase + b"\\n")
                seen = b""
        _, status = os.waitpid(pid, 0)
        sys.stderr.buffer.write(seen)
        sys.exit(os.waitstatus_to_exitcode(status))
        """
}
