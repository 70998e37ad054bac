#if hasFeature(Embedded)
import CLibc

/// `errno` for the Embedded Swift build (scripts/build-lean), as Glibc's overlay gives it to
/// the full one: C declares it as a macro, which Swift cannot import.
package var errno: Int32 { ak_errno() }

// The file mode bits as Glibc's overlay gives them (`mode_t`): C defines them as macros that
// Swift imports as `Int32`, or, for those written as shifts, not at all.
package let S_IFMT = mode_t(0o170000)
package let S_IFREG = mode_t(0o100000)
package let S_IFLNK = mode_t(0o120000)
package let S_ISVTX = mode_t(0o1000)
package let S_IRGRP = mode_t(0o040)
package let S_IWGRP = mode_t(0o020)
package let S_IROTH = mode_t(0o004)
package let S_IWOTH = mode_t(0o002)

/// open(2) without a mode, as Glibc's overlay has it.
package func open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { ak_open(path, flags) }

/// openat(2) without a mode, as Glibc's overlay has it.
package func openat(_ folder: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { ak_openat(folder, path, flags) }
#endif
