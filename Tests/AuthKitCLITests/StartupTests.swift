import Foundation
import TestSupport
import Testing

/// The one start-up trick that stays (docs/architecture.md, "The start-up of `authkit
/// token`"): libcurl, with its ~15 dependencies, is opened on the first HTTP request, so a
/// command that makes none (`authkit token` with a valid stored token) never loads it.
@Suite struct StartupTests {
    @Test func libcurlIsNotLinkedButOpenedOnFirstUse() throws {
        let ldd = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/ldd"), [TestPaths.product("authkit").path], environment: [:], timeout: 30)
        #expect(ldd.status == 0, "\(ldd.stderr)")
        #expect(ldd.stdout.contains("libcrypto"), "libcrypto is linked plainly: \(ldd.stdout)")
        #expect(!ldd.stdout.contains("libcurl"), "libcurl must stay out of every start: \(ldd.stdout)")
    }
}
