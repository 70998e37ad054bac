// authkit-example: another tool using the sign-in that `authkit login --group GROUP` stored.
import AuthKit

#if canImport(Glibc)
import Glibc
#endif

let group = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "com.example.shared"

do throws(AuthKitError) {
    // Naming the same group is all it takes: no configuration, no second sign-in.
    let session = try SharedSession(group: group)
    guard let account = try await session.accounts().first else {
        print("Nobody is signed in in \(group): run `authkit login --group \(group)`.")
        exit(1)
    }
    print("Signed in as \(account.name ?? account.account) (\(account.account)) at \(account.issuer)")

    // A token that lives two more minutes at least, refreshed first if needed (once for all
    // tools of the group). Send token.value as a Bearer token; never print or log it.
    let token = try await session.validAccessToken(minimumLifetime: .seconds(120))
    let minutes = Int(token.expiresAt.timeIntervalSinceNow / 60)
    print("Access token valid for \(minutes) more minutes\(token.refreshed ? " (just refreshed)" : "")")
} catch {
    print("authkit-example: \(error)")
    exit(error.category == .loginNeeded ? 1 : 2)
}
