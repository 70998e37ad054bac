import ArgumentParser
import AuthKit
import AuthKitCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authkit config`: the effective settings and where each one came from (like `git config
/// --show-origin` and `az config get`), and `authkit config path`.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the effective settings and where each one comes from.",
        discussion: """
            Lists the settings a command would use with the same flags and environment: the \
            profile, issuer, tenant, client id, scopes, group, storage and the rest, each with \
            its source: a flag, an AUTHKIT_* variable, file:line of the config file, a built-in \
            profile, where the group's last sign-in was saved (storage), or authkit's default. A \
            client secret is shown as "(set)", never its value. Reads only the config file, the \
            environment and that record: no network, no token store.

            Examples:
              authkit config
              authkit config --profile work --json
              authkit config path

            See `authkit help config` for the file's format.
            """,
        subcommands: [ConfigShowCommand.self, ConfigPathCommand.self, ConfigMapCommand.self],
        defaultSubcommand: ConfigShowCommand.self
    )
}

/// `authkit config show` (the default): the effective settings with their sources.
struct ConfigShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the effective settings and their sources (the default).",
        usage: "authkit config [show] [--json] [<options>]")

    @OptionGroup var session: SessionOptions

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    func run() throws {
        let profile: Profile
        do { profile = try session.resolveProfile() } catch { throw failure(error) }
        let environment = ProcessInfo.processInfo.environment
        let path = ConfigFile.location(environment: environment)
        let exists = FileManager.default.fileExists(atPath: path)
        let settings = Self.settings(of: profile, environment: environment)
        if json {
            let report = ConfigReport(
                configFile: .init(path: path, exists: exists),
                settings: settings.map { .init(key: $0.key, value: $0.value, source: $0.source) })
            do throws(JSONOutputError) {
                Terminal.printData(try JSONOutput.render(report))
            } catch {
                Terminal.printError("authkit: \(error)")
                throw ExitStatus.usage
            }
            return
        }
        var rows = settings.map { [$0.key, $0.value ?? "", $0.source] }
        rows.insert(["setting", "value", "source"], at: 0)
        Terminal.printOut(TableFormatter.format(rows))
        Terminal.printOut("\nconfig file: \(path)\(exists ? "" : " (not found; `authkit help config` shows its format)")")
    }

    /// Each setting with its value (nil: not set) and where it came from.
    static func settings(of profile: Profile, environment: [String: String]) -> [(key: String, value: String?, source: String)] {
        let account = environment["AUTHKIT_ACCOUNT"].flatMap { $0.isEmpty ? nil : $0 }
        func source(_ key: String, default fallback: String = "not set") -> String {
            profile.sources[key] ?? fallback
        }
        return [
            ("profile", profile.name, source("profile")),
            ("issuer", profile.issuer, source("issuer")),
            ("tenant", profile.tenant, source("tenant")),
            ("client_id", profile.clientID, source("client_id")),
            ("client_secret", profile.clientSecret == nil ? nil : "(set)", source("client_secret")),
            ("scopes", profile.scopes.joined(separator: " "), source("scopes", default: "built-in default")),
            ("group", profile.group, source("group", default: "built-in default")),
            (
                "account", account,
                account == nil
                    ? "not set: the group's current account (`authkit account`), else its most recent sign-in"
                    : "environment variable AUTHKIT_ACCOUNT"
            ),
            ("storage", profile.storage.rawValue, source("storage", default: "built-in default")),
            ("redirect_host", profile.redirectHost.rawValue, source("redirect_host", default: "built-in default")),
            ("redirect_path", profile.redirectPath, source("redirect_path", default: "built-in default")),
            ("redirect_port", profile.redirectPort.map(String.init), source("redirect_port", default: "not set: any free port")),
            ("dpop", profile.dpop.rawValue, source("dpop", default: "built-in default: when the provider offers it")),
            ("graph_url", profile.graphBaseURL, source("graph_url")),
            ("login_hint", profile.loginHint, source("login_hint")),
            ("prompt", profile.prompt, source("prompt")),
            ("domain_hint", profile.domainHint, source("domain_hint")),
        ]
    }
}

/// `authkit config path`: where the config file is (whether or not it exists).
struct ConfigPathCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "path",
        abstract: "Print the config file's path (AUTHKIT_CONFIG, else $XDG_CONFIG_HOME/authkit/config, else ~/.config/authkit/config).")

    func run() throws {
        Terminal.printOut(ConfigFile.location(environment: ProcessInfo.processInfo.environment))
    }
}

/// `authkit config --json`: stable field names (README, "config --json").
struct ConfigReport: Encodable {
    struct File: Encodable {
        var path: String
        var exists: Bool
    }
    struct Setting: Encodable {
        var key: String
        var value: String?
        var source: String
    }
    var configFile: File
    var settings: [Setting]
}
