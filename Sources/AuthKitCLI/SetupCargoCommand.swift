import ArgumentParser
import AuthKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit setup cargo --registry NAME --index URL`.
struct SetupCargoCommand: SetupClientCommand {
    static func status() -> String {
        let path = configPath(environment: ProcessInfo.processInfo.environment)
        guard let bytes = try? FileAccess.read(path, limit: 4 << 20), let text = String(validating: bytes, as: UTF8.self) else {
            return "not set up (authkit setup cargo --registry NAME --index URL)"
        }
        var registries: [String] = []
        var current: String?
        for line in text.split(separator: "\n") {
            let trimmed = String(line).trimmingCharacters(in: " \t\r")
            if trimmed.hasPrefix("[registries.") && trimmed.hasSuffix("]") {
                current = String(trimmed.dropFirst(12).dropLast())
            } else if trimmed.hasPrefix("[") {
                current = nil
            } else if let name = current, trimmed.hasPrefix("credential-provider"), trimmed.contains("\"credential\", \"cargo\"") {
                registries.append(name)
            }
        }
        return registries.isEmpty ? "not set up (authkit setup cargo --registry NAME --index URL)" : "set up for " + registries.joined(separator: ", ") + " (\(path))"
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
        guard let url = URL(string: plain), let scheme = url.scheme, let host = url.host, !host.isEmpty,
            scheme == "https" || (scheme == "http" && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)),
            !index.contains("\""), !index.contains("\\"), !index.unicodeScalars.contains(where: { $0.value < 0x20 })
        else {
            throw ValidationError("--index must be an https URL (http only on loopback), e.g. sparse+https://cargo.example.com/index/")
        }
    }

    func run() async throws {
        let path = Self.configPath(environment: ProcessInfo.processInfo.environment)
        let executable = Setup.executablePath()
        let section = """
            [registries.\(registry)]
            index = "\(index)"
            credential-provider = ["\(executable)", "credential", "cargo"]

            """
        do throws(Setup.Failure) {
            let existing: [UInt8]? = FileManager.default.fileExists(atPath: path) ? try read(path) : nil
            let text = existing.map { String(decoding: $0, as: UTF8.self) } ?? ""
            let plan = try Setup.planSection(
                kind: .credential, name: index.hasPrefix("sparse+") ? String(index.dropFirst(7)) : index, option: "--index",
                entries: target.entries)
            let header = "[registries.\(registry)]"
            let present = text.split(separator: "\n").contains { String($0).trimmingCharacters(in: " \t\r") == header }
            if present && !text.contains(section) {
                throw Setup.Failure(description: "\(path) configures \(header) already; add credential-provider = [\"\(executable)\", \"credential\", \"cargo\"] to it by hand, or remove it first")
            }
            if printOnly {
                Terminal.printData("# \(path)\n\(section)\(plan.printed)")
                return
            }
            let written = try plan.apply { () throws(Setup.Failure) in
                guard !present else {
                    Terminal.printError("cargo: \(path): \(header) already set")
                    return
                }
                let separator = text.isEmpty || text.hasSuffix("\n\n") ? "" : (text.hasSuffix("\n") ? "\n" : "\n\n")
                try? FileManager.default.createDirectory(atPath: Setup.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                try Setup.writeAtomically(Array((text + separator + section).utf8), to: path, mode: 0o644)
                Terminal.printError("cargo: \(path): added \(header)")
            }
            Terminal.printError(written)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    private func read(_ path: String) throws(Setup.Failure) -> [UInt8] {
        do { return try FileAccess.read(path, limit: 4 << 20) } catch { throw Setup.Failure(description: "\(path): \(error)") }
    }

    /// `$CARGO_HOME/config.toml`, else `~/.cargo/config.toml`.
    static func configPath(environment: [String: String]) -> String {
        let home = environment["CARGO_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? (environment["HOME"] ?? "") + "/.cargo"
        return home + "/config.toml"
    }
}
