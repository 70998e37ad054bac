import ArgumentParser
import AuthKit
import AuthKitCore
import JOSE

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `authkit setup git --host URL`.
struct SetupGitCommand: SetupClientCommand {
    static func status() -> SetupStatus {
        guard let helpers = try? Setup.run("git", ["config", "--global", "--get-regexp", #"^credential\..*\.helper$"#]) else {
            return .unknown("git not found")
        }
        let hosts = helpers.output.split(separator: "\n").filter { $0.contains("authkit") }
            .compactMap { $0.split(separator: " ").first.map { $0.dropFirst("credential.".count).dropLast(".helper".count) } }
        return .of(Set(hosts.map(String.init)).sorted(), hint: "authkit setup git --host URL")
    }

    static let configuration = CommandConfiguration(
        commandName: "git",
        abstract: "Make git use the shared sign-in for one host.",
        usage: "authkit setup git --host <url> [--print] [<options>]",
        discussion: """
            Writes, with `git config --global`, an empty credential.URL.helper (so no other \
            helper answers for this host) and then authkit's, and maps the host in authkit's \
            config file:

              authkit setup git --host https://dev.azure.com --profile microsoft \\
                  --scope 499b84ac-1321-427f-aa17-267ca6975798/.default
            """
    )

    @Option(help: ArgumentHelp("The git host, as https://host[:port][/path].", valueName: "url"))
    var host: String

    @OptionGroup var target: SetupTargetOptions

    @OptionGroup var user: SetupUsernameOption

    @Flag(name: .customLong("print"), help: "Only show what would be written.")
    var printOnly = false

    func validate() throws {
        // What the plug-in serves: https (http only on loopback), no query or fragment.
        guard let url = URL(string: host), let scheme = url.scheme, let name = url.host(percentEncoded: true), !name.isEmpty,
            CredentialMap.carriesTokens(scheme: scheme, host: name), url.query == nil, url.fragment == nil, !host.contains(" ")
        else { throw ValidationError("--host must be an https://host URL (http only on loopback), e.g. https://dev.azure.com") }
        // A user name may choose the mapping (https://USER@host); a password would be written
        // into git's global config and authkit's, in the clear.
        guard url.password(percentEncoded: true) == nil else {
            throw ValidationError("--host must not carry a password (https://USER@host names a user; the token is the password)")
        }
    }

    func run() async throws {
        let key = "credential.\(host).helper"
        // (The lean client installed with authkit, where there is one: the same answers, faster.)
        let helper = "!\(Setup.shellQuoted(Setup.plugInProgram("git"))) credential git"
        do throws(Setup.Failure) {
            let plan = try Setup.planSection(kind: .credential, name: host, option: "--host", entries: user.entries(target))
            if printOnly {
                Terminal.printData(
                    "git config --global --replace-all \(Setup.shellQuoted(key)) ''\ngit config --global --add \(Setup.shellQuoted(key)) \(Setup.shellQuoted(helper))\n\(plan.printed)"
                )
                return
            }
            let section = try plan.apply { () throws(Setup.Failure) in try configureGit(key: key, helper: helper) }
            Terminal.printError(section)
        } catch {
            Terminal.printError("authkit: \(error)")
            throw ExitStatus.usage
        }
    }

    /// git's helper list for the host: an empty reset, then authkit. When git refuses a step,
    /// the list is put back as it was.
    private func configureGit(key: String, helper: String) throws(Setup.Failure) {
        let current = try Setup.run("git", ["config", "--global", "--get-all", key])
        let previous = Array(
            current.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropLast(
                current.output.hasSuffix("\n") ? 1 : 0))
        if previous == ["", helper] {
            Terminal.printError("git: \(key) already set")
            return
        }
        _ = try Setup.run("git", ["config", "--global", "--unset-all", key])
        let reset = try Setup.run("git", ["config", "--global", "--add", key, ""])
        let add = try Setup.run("git", ["config", "--global", "--add", key, helper])
        guard reset.status == 0, add.status == 0 else {
            _ = try? Setup.run("git", ["config", "--global", "--unset-all", key])
            for value in previous { _ = try? Setup.run("git", ["config", "--global", "--add", key, value]) }
            throw Setup.Failure(description: "git config --global failed; \(key) was left as it was")
        }
        Terminal.printError("git: \(key) = \(helper) (after an empty reset)")
    }
}
