import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A built product copied where every user can run it (a 0755 folder under the temporary
/// directory), for what another account runs: the checkout may sit in a folder only its owner
/// can enter. A program outside the package (`/usr/bin/...`) is used where it is. The caller
/// removes the copy (``remove()``).
public struct ReachableCopy: Sendable {
    /// The program to run.
    public let url: URL
    private let folder: URL?

    public init(of executable: URL) throws {
        let package = TestPaths.packageRoot.standardizedFileURL.path + "/"
        let products = TestPaths.productsDirectory.standardizedFileURL.path + "/"
        let path = executable.standardizedFileURL.path
        guard path.hasPrefix(package) || path.hasPrefix(products) else {
            url = executable
            folder = nil
            return
        }
        let folder = try TestPaths.makeTemporaryDirectory(prefix: "authkit-reachable")
        let copy = folder.appendingPathComponent(executable.lastPathComponent)
        do {
            try FileManager.default.copyItem(at: executable, to: copy)
            guard chmod(folder.path, 0o755) == 0, chmod(copy.path, 0o755) == 0 else {
                throw HarnessError("cannot open \(copy.path) to other users: \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.url = copy
        self.folder = folder
    }

    /// Removes the copy (nothing for a program used where it is).
    public func remove() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }
}
