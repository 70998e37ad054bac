// The lean client: `authkit token`, `exec` and the plug-ins of kubectl, git, docker and cargo answered from
// the agent, or without one from the Secret Service, by a program that starts in a fraction of
// authkit's time (docs/decisions.md, "A lean client for the hot path"). Embedded Swift over
// AuthKitCore and StrictJSON, built by scripts/build-lean; everything it does not answer
// itself goes to the full `authkit` beside it, with the same arguments.
import AuthKitCore
import CLibc

@_cdecl("main")
func leanMain(_ count: Int32, _ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var arguments: [String] = []
    for index in 1..<max(1, Int(count)) { arguments.append(vector[index].map { String(cString: $0) } ?? "") }
    let name = count > 0 ? vector[0].map { String(cString: $0) } ?? "" : ""
    // Before anything is open: what `exec` passes on is the parent's, never ours.
    if arguments.first == "exec" { LeanProcess.keepInheritedDescriptors() }
    guard let environment = LeanProcess.environment() else { LeanProcess.handOff(vector) }
    // (A name the stores would refuse is a problem authkit reports.) Read once: a mapped
    // plug-in looks at it for the mapping and again for the profile.
    var read: (path: String, file: ConfigFile?)?
    let configuration = { (path: String) -> ConfigFile? in
        if let read, read.path == path { return read.file }
        let file = try? ConfigFile.load(path: path, environment: environment, rules: .leanClient)
        read = (path, file)
        return file
    }
    // (Our group is one the stores take, so no other line can be its line.)
    let storageRecord = { (path: String) in GroupStateLines.read(path, isGroup: { _ in true }) }
    let plan = LeanTokenPlan.make(
        arguments: arguments, program: String(name.split(separator: "/").last ?? ""), environment: environment,
        configuration: configuration, storageRecord: storageRecord)
    switch plan {
    case .handOff:
        LeanProcess.handOff(vector)
    case .ask(let query, let socket):
        let (token, expiresAt) = ask(query, socket, vector, input: nil)
        // (authkit's own last check: whole seconds left, rounded toward zero.)
        guard Int(LeanProcess.secondsUntil(expiresAt)) >= query.minTTL else { LeanProcess.handOff(vector) }
        LeanProcess.write(Array(token.utf8) + [0x0A])
    case .kubectl(let query, let socket, let apiVersion):
        // The plug-in hands out what the agent gave for its --min-ttl, as authkit's does.
        let (token, expiresAt) = ask(query, socket, vector, input: nil)
        LeanProcess.write(Array(KubectlExecInfo.answer(apiVersion: apiVersion, token: token, expiresAt: wholeSeconds(expiresAt)).utf8))
    case .exec(var query, let socket, let variable, let command):
        // Resolved once: the program the agent is told of is the one that runs.
        query.program = ExecRules.programPath(command.first, path: environment["PATH"])
        let (token, _) = ask(query, socket, vector, input: nil)
        LeanProcess.replaceProcess(with: command, path: query.program, variable: variable, token: token)
    case .gitStore:
        _ = gitRequest(vector)
    case .docker(let options, let action):
        let (text, input) = pluginRequest(vector)
        switch LeanTokenPlan.dockerAnswer(
            text, options: options, action: action, environment: environment, configuration: configuration, storageRecord: storageRecord)
        {
        case .nothing: break
        case .handOff: LeanProcess.handOff(vector, input: input)
        case .notFound:
            LeanProcess.write(Array((DockerCredentialText.notFound + "\n").utf8))
            return 1
        case .ask(let query, let socket, let server, let username):
            let (token, _) = ask(query, socket, vector, input: input)
            LeanProcess.write(Array(DockerCredentialText.answer(server: server, username: username, token: token).utf8))
        }
    case .cargo(let options):
        LeanProcess.greet(Array(CargoCredentialText.greeting.utf8))
        guard let (request, input) = cargoRequest(vector) else { break }
        switch LeanTokenPlan.cargoAnswer(
            request, options: options, environment: environment, configuration: configuration, storageRecord: storageRecord)
        {
        case .handOff: LeanProcess.handOff(vector, input: input)
        case .refused(let kind): LeanProcess.write(Array(CargoCredentialText.error(kind: kind).utf8))
        case .ask(let query, let socket):
            let (token, expiresAt) = ask(query, socket, vector, input: input)
            let expiration = CargoCredentialText.expiration(expiresAt: wholeSeconds(expiresAt), minTTL: query.minTTL)
            LeanProcess.write(Array(CargoCredentialText.answer(token: token, expiration: expiration).utf8))
        }
    case .gitGet(let options, let username):
        let (request, input) = gitRequest(vector)
        switch LeanTokenPlan.gitAnswer(
            request, options: options, username: username, environment: environment, configuration: configuration,
            storageRecord: storageRecord)
        {
        case .nothing: break
        case .handOff: LeanProcess.handOff(vector, input: input)
        case .ask(let query, let socket, let username):
            let (token, expiresAt) = ask(query, socket, vector, input: input)
            LeanProcess.write(Array(request.answer(token: token, expiresAt: wholeSeconds(expiresAt), username: username).utf8))
        }
    }
    return 0
}

/// The agent's token for `query` and when it expires, or the command handed to authkit (with
/// the agent's refusal, and the request read from standard input).
func ask(_ query: AgentTokenQuery, _ socket: String?, _ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, input: [UInt8]?)
    -> (String, Double)
{
    let exchanged = socket.map {
        AgentExchange.exchange(path: $0, line: query.line, timeout: .seconds(90), limit: AgentExchange.maximumAnswerBytes)
    }
    let noAgent: Bool
    switch exchanged {
    case nil: noAgent = true
    case .failure(let failure): noAgent = failure.code == ENOENT || failure.code == ECONNREFUSED
    case .success: noAgent = false
    }
    if noAgent {
        // Nobody to ask (authkit then reads the store): the store's record, when it is the
        // plainest case and lives --min-ttl; else authkit reads it and refreshes or explains.
        guard let record = storeRecord(query), LeanProcess.secondsUntil(record.expiresAt) >= Double(query.minTTL) else {
            LeanProcess.handOff(vector, input: input)
        }
        return (record.accessToken, record.expiresAt)
    }
    guard case .success(let line) = exchanged, let answer = AgentTokenAnswer(line: line) else {
        LeanProcess.handOff(vector, input: input)
    }
    guard answer.usable(askedScopes: query.scopes, askedResources: query.resources), let token = answer.token,
        let expiresAt = answer.expiresAt
    else {
        // A refusal is authkit's to explain, from this answer: asking again could ask a
        // person to confirm twice.
        LeanProcess.handOff(vector, refusal: !answer.ok && answer.failed && answer.token == nil ? line : nil, input: input)
    }
    return (token, Double(expiresAt))
}

/// An expiry as authkit's plug-ins print it: the whole second it falls in.
func wholeSeconds(_ time: Double) -> Int { Int(time.rounded(.down)) }

/// The sign-in's record in the Secret Service for `query`, without asking anyone anything
/// (`LeanSecretService`, `StoredTokenRecord.chosen`): only for the Secret Service, and a token
/// of the sign-in's own scopes (a narrower one is authkit's to ask the provider for).
func storeRecord(_ query: AgentTokenQuery) -> StoredTokenRecord? {
    guard query.storage == StoreNames.secretService, query.scopes.isEmpty, query.resources.isEmpty,
        let items = LeanSecretService.tokenItems(group: query.group)
    else { return nil }
    return StoredTokenRecord.chosen(from: items, account: query.account)
}

/// A plug-in's request on standard input, read as authkit reads it (`CredentialInput`), and
/// its bytes; anything authkit would refuse is handed to it, with what was read.
func pluginRequest(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> (String, [UInt8]) {
    guard let (bytes, error) = LeanProcess.readStandardInput(limit: CredentialInput.maximumBytes) else {
        LeanProcess.handOff(vector)
    }
    if let error {
        // Nothing read: authkit reads standard input as it is, and meets what ended this.
        guard !bytes.isEmpty else { LeanProcess.handOff(vector) }
        LeanProcess.unreadableInput(error)
    }
    guard case .success(let text) = CredentialInput.text(bytes) else { LeanProcess.handOff(vector, input: bytes) }
    return (text, bytes)
}

/// git's request, read as authkit reads it, and its bytes.
func gitRequest(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> (GitCredentialRequest, [UInt8]) {
    let (text, bytes) = pluginRequest(vector)
    guard let request = try? GitCredentialRequest(parsing: text) else { LeanProcess.handOff(vector, input: bytes) }
    return (request, bytes)
}

/// cargo's request line, read as authkit reads it (one line, bounded, UTF-8 without NUL), and
/// its bytes; nil when cargo closed without asking (authkit then answers nothing). Anything
/// else authkit would refuse is handed to it, with what was read.
func cargoRequest(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> (CargoCredentialText.Request, [UInt8])? {
    guard let (bytes, ended) = LeanProcess.readLine(limit: CredentialInput.maximumLineBytes) else { LeanProcess.handOff(vector) }
    if bytes.isEmpty && !ended { return nil }
    let line = ended ? Array(bytes.dropLast()) : bytes
    guard line.count <= CredentialInput.maximumLineBytes, !line.contains(0), let text = String(validating: line, as: UTF8.self) else {
        LeanProcess.handOff(vector, input: bytes)
    }
    guard let request = try? CargoCredentialText.Request(parsing: text.hasSuffix("\r") ? String(text.dropLast()) : text) else {
        LeanProcess.handOff(vector, input: bytes)
    }
    return (request, bytes)
}
