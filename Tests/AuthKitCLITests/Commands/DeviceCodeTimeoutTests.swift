import Foundation
import TestSupport
import Testing

/// No hang. A provider whose polling `interval` is 60 s must not stretch
/// `login --device-code --timeout 10` to a minute, and the wait shows the time to the timeout,
/// not the code's ten-minute lifetime.
@Suite struct DeviceCodeTimeoutTests {
    @Test func theTimeoutEndsTheWaitWhateverTheInterval() async throws {
        var options = OIDCTestProvider.Options()
        options.deviceInterval = 60
        let world = try await CLIHarness.start(provider: options)
        defer { world.stop() }
        let arguments = world.loginArguments(["--device-code", "--timeout", "10"])
        let started = Date()
        let login = try world.start(arguments, environment: world.browserEnvironment())
        let shown = await login.waitForStderr { CLIOutput.deviceCode(in: $0) }
        #expect(shown != nil, "no device code shown: \(login.stderrSoFar)")
        let result = try await world.finish(login, arguments, timeout: 40)
        let elapsed = Date().timeIntervalSince(started)
        #expect(elapsed < 45, "the wait took \(Int(elapsed)) s for a 10 s timeout")
        #expect(result.status == 1, "\(result.status): \(result.stderr)")
        // The person saw the time to the timeout (seconds), never the code's 10 minutes.
        #expect(!result.stderr.contains("10 min") && !result.stderr.contains("9 min"), "\(result.stderr)")
        try await world.assertNoSecretsLeaked()
    }

    /// No trap on the device answer's numbers: Int64.max, 1e300, a fraction or a string for
    /// `expires_in` and `interval` — clamped or refused, never a signal.
    @Test(arguments: [PeerJSON.number(9.223372036854775807e18), .number(1e300), .number(-1), .number(0.5), .string("60")])
    func absurdDeviceNumbersNeverKill(value: PeerJSON) async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.provider.setFault(.patchJSON("device_authorization", ["expires_in": value, "interval": value]))
        let started = Date()
        let result = try await world.authkit(world.loginArguments(["--device-code", "--timeout", "10"]), timeout: 40)
        #expect(result.status >= 0 && result.status < 128, "\(value): died with \(result.status): \(result.stderr)")
        #expect(result.status != 0)
        #expect(Date().timeIntervalSince(started) < 45, "the 60 s interval must not outlast a 10 s timeout")
        try await world.assertNoSecretsLeaked()
    }
}
