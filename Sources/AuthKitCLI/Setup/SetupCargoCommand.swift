import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup cargo --registry NAME --index URL`.
struct SetupCargoCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        let path = configPath(environment: ProcessInfo.processInfo.environment)
        let registries = Setup.sections(of: path, name: { $0.hasPrefix("registries.") ? String($0.dropFirst(11)) : nil }) {
            $0.hasPrefix("credential-provider") && $0.contains("\"credential\", \"cargo\"")
        }
        return .of(registries, place: path, hint: "authkit setup cargo --registry NAME --index URL")
    }

    static let configuration = CommandConfiguration(
        commandName: "cargo",
        abstract: "Make cargo use the shared sign-in for one registry.",
        usage: "authkit setup cargo --registry <name> --index <url> [--print] [<options>]",
        discussion: """
            Adds [registries.NAME] with the index and authkit as its credential-provider to \
            cargo's config.toml ($CARGO_HOME, else ~/.cargo) — appended, nothing else touched; \
            a registry already configured there is left alone (edit it by hand) — and maps \
            the index URL in authkit's config file.

              authkit setup cargo --registry internal --index sparse+https://cargo.example.com/index/ --group com.example.shared
            """
    )

    @Option(help: ArgumentHelp("The registry's name in cargo's configuration (letters, digits, - and _).", valueName: "name"))
    var registry: String

    @Option(help: ArgumentHelp("The registry's index URL (sparse+https://…).", valueName: "url"))
    var index: String

    @OptionGroup var target: SetupTargetOptions

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        guard !registry.isEmpty, registry.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw ValidationError("--registry must be a cargo registry name: letters, digits, - and _")
        }
        let plain = index.hasPrefix("sparse+") ? String(index.dropFirst(7)) : index
        guard let url = URL(string: plain), let scheme = url.scheme, let host = url.host(percentEncoded: true), !host.isEmpty,
            CredentialMap.carriesTokens(scheme: scheme, host: host), url.user == nil, url.query == nil, url.fragment == nil,
            !index.contains("\""), !index.contains("\\"), !index.unicodeScalars.contains(where: { $0.value < 0x20 })
        else {
            throw ValidationError("--index must be an https URL (http only on loopback), e.g. sparse+https://cargo.example.com/index/")
        }
    }

    func run() async throws {
        let path = Self.configPath(environment: ProcessInfo.processInfo.environment)
        // (The lean client installed with authkit, where there is one: the same answers, faster.)
        let executable = Setup.plugInProgram("cargo")
        let section = """
            [registries.\(registry)]
            index = "\(index)"
            credential-provider = ["\(executable)", "credential", "cargo"]

            """
        do throws(Setup.Failure) {
            let plan = try Setup.planSection(
                kind: .credential, name: CargoCredentialText.fetchedURL(index), option: "--index",
                entries: target.entries)
            if printOnly {
                Terminal.printData("# \(path)\n\(section)\(plan.printed)")
                return
            }
            let written = try plan.apply { () throws(Setup.Failure) in
                Terminal.printError(
                    "cargo: " + (try Setup.appendSection(section, header: "[registries.\(registry)]", to: path, mode: 0o644)))
            }
            Terminal.printError(written)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// `$CARGO_HOME/config.toml`, else `~/.cargo/config.toml`.
    static func configPath(environment: [String: String]) -> String {
        let home = environment["CARGO_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.cargo"
        return home + "/config.toml"
    }
}
