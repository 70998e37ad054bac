#if hasFeature(Embedded)
import CLibc

/// `errno` for the Embedded Swift build (scripts/build-lean), as Glibc's overlay gives it to
/// the full one: C declares it as a macro, which Swift cannot import.
package var errno: Int32 { ak_errno() }

/// open(2) without a mode, as Glibc's overlay has it.
package func open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { ak_open(path, flags) }

/// openat(2) without a mode, as Glibc's overlay has it.
package func openat(_ folder: Int32, _ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 { ak_openat(folder, path, flags) }
#endif
