// The lean client: `authkit token` and kubectl's `authkit credential kubectl` answered from the
// agent by a program that starts in a fraction of authkit's time (docs/decisions.md, "A lean
// client for the hot path"). Embedded Swift over AuthKitCore and StrictJSON, built by
// scripts/build-lean; everything it does not answer itself goes to the full `authkit` beside
// it, with the same arguments.
import AuthKitCore
import CLibc

@_cdecl("main")
func leanMain(_ count: Int32, _ vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var arguments: [String] = []
    for index in 1..<max(1, Int(count)) { arguments.append(vector[index].map { String(cString: $0) } ?? "") }
    let name = count > 0 ? vector[0].map { String(cString: $0) } ?? "" : ""
    guard let environment = LeanProcess.environment() else { LeanProcess.handOff(vector) }
    let plan = LeanTokenPlan.make(
        arguments: arguments, program: String(name.split(separator: "/").last ?? ""), environment: environment,
        exists: LeanProcess.exists,
        // (Our group is one the stores take, so no other line can be its line.)
        storageRecord: { GroupStateLines.read($0, isGroup: { _ in true }) })
    let query: AgentTokenQuery, socket: String
    switch plan {
    case .ask(let asked, let path), .kubectl(let asked, let path, _): (query, socket) = (asked, path)
    case .handOff: LeanProcess.handOff(vector)
    }
    guard
        case .success(let line) = AgentExchange.exchange(
            path: socket, line: query.line, timeout: .seconds(90), limit: AgentExchange.maximumAnswerBytes),
        let answer = AgentTokenAnswer(line: line)
    else { LeanProcess.handOff(vector) }
    guard answer.usable(askedScopes: query.scopes, askedResources: query.resources), let token = answer.token,
        let expiresAt = answer.expiresAt
    else {
        // A refusal is authkit's to explain, from this answer: asking again could ask a
        // person to confirm twice.
        LeanProcess.handOff(vector, refusal: !answer.ok && answer.failed && answer.token == nil ? line : nil)
    }
    switch plan {
    case .kubectl(_, _, let apiVersion):
        // The plug-in hands out what the agent gave for its --min-ttl, as authkit's does.
        LeanProcess.write(Array(KubectlExecInfo.answer(apiVersion: apiVersion, token: token, expiresAt: Int(expiresAt)).utf8))
    default:
        guard LeanProcess.secondsUntil(expiresAt) >= query.minTTL else { LeanProcess.handOff(vector) }
        LeanProcess.write(Array(token.utf8) + [0x0A])
    }
    return 0
}
