import AuthKit

/// What `authkit token` was asked for, however it was parsed (ArgumentParser or
/// ``TokenFastPath``), and how it is carried out.
struct TokenRequest: Equatable {
    var profile: String?
    var group: String?
    var insecureStorage = false
    var account: String?
    var minTTL = 60
    var scopes: [String] = []

    static let minTTLRange = 0...86_400

    var session: SessionSettings {
        SessionSettings(profile: profile, group: group, insecureStorage: insecureStorage)
    }

    /// Prints the token (and a newline) on standard output, or reports why not.
    func run() async throws {
        do {
            let profile = try session.resolveProfile()
            let shared = try session.session(for: profile)
            let token = try await shared.validAccessToken(
                account: account, minimumLifetime: .seconds(minTTL), scopes: scopes.isEmpty ? nil : scopes)
            Terminal.write(fd: 1, token.value + "\n")
        } catch {
            switch error.category {
            case .loginNeeded:
                // One line: scripts log stderr, and `$(authkit token)` leaves stdout empty.
                Terminal.printError("authkit: \(error); run `\(loginCommand(session))` to sign in")
                throw ExitStatus.loginNeeded
            default:
                throw failure(error)
            }
        }
    }
}

/// `authkit token` without ArgumentParser's start-up cost.
///
/// ArgumentParser builds the whole command tree through reflection before it parses, and
/// each dynamic cast that involves scans every protocol conformance in the binary: about
/// 11 million instructions, a third of a `secret-tool lookup`, on every `authkit token`
/// (measured with callgrind; docs/architecture.md). The token command is the one scripts
/// run in loops, so its few options are parsed here directly. Anything else — `--help`, an
/// unknown or malformed option, a value out of range — returns nil and ArgumentParser parses
/// as usual, so its help and error messages stay the only ones. `TokenFastPathTests`
/// checks that both parsers agree.
enum TokenFastPath {
    static func parse(_ arguments: [String]) -> TokenRequest? {
        guard arguments.first == "token" else { return nil }
        var request = TokenRequest()
        var index = 1
        func value(_ argument: String, _ name: String) -> String? {
            if argument.hasPrefix(name + "=") { return String(argument.dropFirst(name.count + 1)) }
            guard argument == name, index + 1 < arguments.count else { return nil }
            index += 1
            let next = arguments[index]
            return next.hasPrefix("-") ? nil : next
        }
        while index < arguments.count {
            let argument = arguments[index]
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            switch name {
            case "--profile":
                guard let text = value(argument, name), request.profile == nil else { return nil }
                request.profile = text
            case "--group":
                guard let text = value(argument, name), request.group == nil else { return nil }
                request.group = text
            case "--account":
                guard let text = value(argument, name), request.account == nil else { return nil }
                request.account = text
            case "--min-ttl":
                guard let text = value(argument, name), let seconds = Int(text), TokenRequest.minTTLRange.contains(seconds)
                else { return nil }
                request.minTTL = seconds
            case "--scope":
                guard let text = value(argument, name) else { return nil }
                request.scopes.append(text)
            case "--insecure-storage":
                guard argument == name, !request.insecureStorage else { return nil }
                request.insecureStorage = true
            default:
                return nil
            }
            index += 1
        }
        return request
    }
}
