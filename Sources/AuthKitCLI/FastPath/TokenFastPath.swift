import AuthKitCore

/// `authkit token` without ArgumentParser's start-up cost.
///
/// ArgumentParser builds the whole command tree through reflection before it parses, and
/// each dynamic cast that involves scans every protocol conformance in the binary: about
/// 11 million instructions, a third of a `secret-tool lookup`, on every `authkit token`
/// (measured with callgrind; docs/decisions.md). The token command is the one scripts
/// run in loops, so its few options are parsed here directly. Anything else — `--help`, an
/// unknown or malformed option, a value out of range — returns nil and ArgumentParser parses
/// as usual, so its help and error messages stay the only ones. `TokenFastPathTests`
/// checks that both parsers agree.
enum TokenFastPath {
    static func parse(_ arguments: [String]) -> TokenRequest? {
        guard arguments.first == "token" else { return nil }
        var scanner = FastPathScanner(authkitArguments: arguments, index: 1)
        var options = FastPathOptions(minTTL: TokenRequest().minTTL)
        while scanner.index < arguments.count {
            // token has no options of its own on the fast path: anything else is ArgumentParser's.
            guard case .handled = scanner.shared(arguments[scanner.index], into: &options) else { return nil }
            scanner.index += 1
        }
        return TokenRequest(selector: options.selector, minTTL: options.minTTL, scopes: options.scopes, resources: options.resources)
    }
}
