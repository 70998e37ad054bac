import ArgumentParser

/// One client's credential plug-in protocol over one AuthKit call: its name, how the client
/// runs it, the options it adds, how it reads a request and what it answers. Adding a client
/// is one adapter (this protocol, its subcommand, its setup) and one line in
/// ``CredentialAdapters/all``, which drives the `credential` subcommands, the fast path, the
/// executable aliases and `setup`.
///
/// An adapter returns its answer instead of printing it: ``CredentialPlugin/serve(_:_:)``
/// writes it, so standard output carries the protocol answer and nothing else.
protocol CredentialAdapter {
    /// `authkit credential CLIENT`.
    static var client: String { get }
    /// The name the client runs authkit under (a link to it), when it has one of its own.
    static var executableAlias: String? { get }
    /// The action words the client passes (`get`, `store` …); empty when it passes none.
    static var actions: [String] { get }
    /// Options of this client's own, each taking a value, with their defaults (nil: none).
    static var ownOptions: [String: String?] { get }
    /// Options of this client's own that take a value and may be given more than once.
    static var repeatedOptions: Set<String> { get }
    /// Flags of this client's own that only say how it runs the plug-in (cargo's
    /// `--cargo-plugin`): accepted, and nothing else.
    static var ownFlags: Set<String> { get }
    /// The `authkit credential CLIENT` subcommand (help and ArgumentParser's parsing).
    static var command: any CredentialAdapterCommand.Type { get }
    /// The `authkit setup …` subcommands of the clients this adapter serves (docker's serves
    /// podman, skopeo and buildah too); empty when there is nothing to set up.
    static var setupCommands: [any SetupClientCommand.Type] { get }
    /// What the plug-in says before it reads a request (cargo's hello), if anything.
    static var greeting: String? { get }
    /// Whether ArgumentParser would accept these flags (the fast path declines otherwise, so
    /// ArgumentParser's message stays the only one).
    static func accepts(_ flags: CredentialFlags) -> Bool
    /// Reads the client's request (standard input, the environment), asks AuthKit, and returns
    /// the answer. Errors are one line (``CredentialPlugin/Failure``).
    nonisolated(nonsending) static func respond(to flags: CredentialFlags) async throws(CredentialPlugin.Failure) -> CredentialAnswer
}

extension CredentialAdapter {
    static var executableAlias: String? { nil }
    static var ownOptions: [String: String?] { [:] }
    static var repeatedOptions: Set<String> { [] }
    static var ownFlags: Set<String> { [] }
    static var greeting: String? { nil }
    static func accepts(_ flags: CredentialFlags) -> Bool { true }
}

/// What a plug-in writes: the protocol answer on standard output (possibly nothing) and its
/// exit status.
struct CredentialAnswer: Equatable {
    var output: String
    var status: ExitCode = .success
    /// A failure's one line for standard error, beside an answer that carries it too (Google's
    /// failure document).
    var message: String?

    static let none = CredentialAnswer(output: "")
}

/// The `authkit credential CLIENT` subcommand of an adapter: ArgumentParser parses into
/// ``flags``, and running it serves the adapter.
protocol CredentialAdapterCommand: AsyncParsableCommand {
    associatedtype Adapter: CredentialAdapter
    /// The parsed command line, as the fast path would have parsed it.
    var flags: CredentialFlags { get }
}

extension CredentialAdapterCommand {
    func run() async throws {
        try await CredentialPlugin.serve(Adapter.self, flags)
    }
}

/// Every client authkit answers, in the order help lists them.
enum CredentialAdapters {
    static var all: [any CredentialAdapter.Type] {
        [
            GitCredentialAdapter.self, DockerCredentialAdapter.self, KubectlCredentialAdapter.self, CargoCredentialAdapter.self,
            AWSCredentialAdapter.self, GCloudCredentialAdapter.self,
        ]
    }

    /// Every client's name, for help: "git, docker, kubectl, cargo, aws or gcloud".
    static var clientNames: String {
        var names: [String] = []
        for adapter in all { names.append(adapter.client) }
        return listed(names)
    }

    /// Every client `authkit setup` configures (docker's adapter serves podman too), for help.
    static var setupNames: String {
        var names: [String] = []
        for adapter in all {
            for command in adapter.setupCommands {
                let configuration: CommandConfiguration = command.configuration
                if let name = configuration.commandName { names.append(name) }
            }
        }
        return listed(names)
    }

    static func listed(_ names: [String]) -> String {
        guard let last = names.last, names.count > 1 else { return names.first ?? "" }
        return names.dropLast().joined(separator: ", ") + " or " + last
    }

    static func named(_ client: String) -> (any CredentialAdapter.Type)? {
        all.first { $0.client == client }
    }

    /// The adapter whose executable alias is `name` (`docker-credential-authkit`).
    static func aliased(_ name: String) -> (any CredentialAdapter.Type)? {
        all.first { $0.executableAlias == name }
    }
}
