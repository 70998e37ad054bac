import Foundation
import TestSupport
import Testing

/// No trap, ever, on a number from outside. Every numeric field of the stored record
/// set to 0, -1, 1e300, -1e300, Int64.max, a fraction or a string: no command dies of a
/// signal, and the sign-in is usable or reported — never removed (only logout removes).
@Suite(.serialized) struct NumericRobustnessTests {
    static let fields = ["access_token_expires_at", "id_token_verified_at", "signed_in_at", "refreshed_at", "generation", "version"]
    nonisolated(unsafe) static let values: [Any] = [0, -1, 1e300, -1e300, Int64.max, 0.5, "3600"]

    @Test(arguments: fields)
    func noCommandDiesOfAStoredNumber(field: String) async throws {
        let world = try await CLIHarness.start()
        defer { world.stop() }
        try await world.signIn(user: "ada")
        let key = [
            "--group", world.group, "--issuer", world.provider.issuer.absoluteString, "--client-id", CLIHarness.clientID, "--account",
            "ada@example.test",
        ]
        for value in Self.values {
            try TerminalSafetyTests.tamper(world, account: "ada@example.test") { $0[field] = value }
            for (arguments, environment) in [
                (["status", "--group", world.group], [String: String]()), (["status", "--json", "--group", world.group], [:]),
                (["token", "--group", world.group], [:]), (["token", "--group", world.group], ["AUTHKIT_LOG": "debug"]),
            ] {
                let result = try await world.authkit(arguments, environment: environment)
                #expect(
                    result.status < 128 && result.status >= 0,
                    "\(field)=\(value): `\(arguments.joined(separator: " "))` died with \(result.status): \(result.stderr)")
                #expect([0, 1, 3, 4].contains(result.status), "\(field)=\(value): \(arguments) exit \(result.status): \(result.stderr)")
            }
            #expect(try world.keyring.probe(["lookup"] + key).status == 0, "\(field)=\(value): the sign-in was removed")
        }
        try await world.assertNoSecretsLeaked()
    }
}
