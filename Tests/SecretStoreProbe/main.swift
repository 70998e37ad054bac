// SecretStoreProbe: a small program over SecretStore for the cross-process tests (it is the
// "second program" next to secret-tool and Python) and for trying a store by hand.
//
//   SecretStoreProbe [options] save --group G --issuer I --client-id C --account A [--kind K] [--label L] < secret
//   SecretStoreProbe [options] lookup|delete --group G --issuer I --client-id C --account A [--kind K]
//   SecretStoreProbe [options] list --group G [--issuer I] [--client-id C] [--account A] [--kind K] [--secrets]
//   SecretStoreProbe [options] delete-all|status|prepare --group G
//   SecretStoreProbe [options] prepare-and-save --group G --issuer I --client-id C --account A < secret  (a sign-in's order)
// options: --plain-file DIR (use PlainFileStore in DIR) --kernel-keyring (KernelKeyringStore) --timeout S --prompt-timeout S
//          --prompts never|unlock|create (the Secret Service store's PromptPolicy; default unlock) --no-prompt (= never) --show-secret
//          --repeat N (run the command N times in this one process, one JSON line each: a store
//          must stay usable after an error such as a timeout)
//
// Prints one JSON object. Exit codes: 0 done, 1 not found, 2 usage, then one per error kind
// (see `exitCode(for:)`), so tests can tell errors apart without parsing English.
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

struct Usage: Error { let message: String }

func exitCode(for error: SecretStoreError) -> Int32 {
    switch error {
    case .invalidGroup, .invalidKey, .invalidSecret: return 10
    case .noSessionBus: return 3
    case .noSecretService: return 4
    case .locked: return 5
    case .unlockDismissed: return 6
    case .timedOut: return 7
    case .providerFailure: return 8
    case .corruptItem: return 9
    case .plainFilePermissions, .plainFileOwner: return 11
    case .plainFileIO: return 12
    case .plainFileCorrupt: return 13
    case .kernelKeyringUnavailable: return 14
    case .kernelKeyringQuota: return 15
    case .kernelKeyringFailure: return 16
    case .encryptedStoreLocked: return 17
    case .encryptedStoreNotSetUp: return 18
    case .wrongPassphrase: return 19
    case .encryptedStoreIdentity: return 20
    case .store: return 21
    }
}

func kindName(of error: SecretStoreError) -> String {
    switch error {
    case .invalidGroup: return "invalidGroup"
    case .invalidKey: return "invalidKey"
    case .invalidSecret: return "invalidSecret"
    case .noSessionBus: return "noSessionBus"
    case .noSecretService: return "noSecretService"
    case .locked: return "locked"
    case .unlockDismissed: return "unlockDismissed"
    case .timedOut: return "timedOut"
    case .providerFailure: return "providerFailure"
    case .corruptItem: return "corruptItem"
    case .plainFilePermissions: return "plainFilePermissions"
    case .plainFileOwner: return "plainFileOwner"
    case .plainFileIO: return "plainFileIO"
    case .plainFileCorrupt: return "plainFileCorrupt"
    case .kernelKeyringUnavailable: return "kernelKeyringUnavailable"
    case .kernelKeyringQuota: return "kernelKeyringQuota"
    case .kernelKeyringFailure: return "kernelKeyringFailure"
    case .encryptedStoreLocked: return "encryptedStoreLocked"
    case .encryptedStoreNotSetUp: return "encryptedStoreNotSetUp"
    case .wrongPassphrase: return "wrongPassphrase"
    case .encryptedStoreIdentity: return "encryptedStoreIdentity"
    case .store: return "store"
    }
}

func json(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20:
            let hex = String(scalar.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out + "\""
}

func json(_ location: StorageLocation) -> String {
    switch location {
    case .collection(let label, let path, let isGroup, let isLocked, let reason):
        return """
            {"type":"collection","label":\(json(label)),"path":\(json(path)),"isGroupCollection":\(isGroup),\
            "isLocked":\(isLocked),"fallbackReason":\(reason.map(json) ?? "null"),"description":\(json(location.description))}
            """
    case .file(let store, let path, _, _):
        let type = store == PlainFileStore.name ? "plainFile" : store
        return #"{"type":\#(json(type)),"path":\#(json(path)),"description":\#(json(location.description))}"#
    case .kernelKeyring(let keyring, _):
        return #"{"type":"kernelKeyring","keyring":\#(keyring),"description":\#(json(location.description))}"#
    }
}

func json(_ item: StoredItem, showSecret: Bool) -> String {
    var fields = [
        #""group":\#(json(item.key.group.name))"#, #""issuer":\#(json(item.key.issuer))"#,
        #""clientID":\#(json(item.key.clientID))"#, #""account":\#(json(item.key.account))"#,
        #""kind":\#(json(item.key.kind))"#, #""label":\#(json(item.label))"#,
        #""location":\#(json(item.location))"#,
        #""secretBytes":\#(item.secret.map { String($0.count) } ?? "null")"#,
        #""problem":\#(item.problem.map { json($0.description) } ?? "null")"#,
    ]
    if showSecret { fields.append(#""secret":\#(item.secret.map { json(String(decoding: $0, as: UTF8.self)) } ?? "null")"#) }
    return "{" + fields.joined(separator: ",") + "}"
}

func readStandardInput() -> [UInt8] {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(0, &buffer, buffer.count)
        if count <= 0 { break }
        bytes += buffer[..<count]
    }
    return bytes
}

let arguments = Array(CommandLine.arguments.dropFirst())
var parsedOptions: [String: String] = [:]
var parsedFlags: Set<String> = []
var parsedCommand: String?
let flagNames: Set<String> = ["--no-prompt", "--show-secret", "--secrets", "--kernel-keyring"]
var index = 0
while index < arguments.count {
    let argument = arguments[index]
    if flagNames.contains(argument) {
        parsedFlags.insert(argument)
    } else if argument.hasPrefix("--") {
        guard index + 1 < arguments.count else {
            print(#"{"error":"usage","message":"\#(argument) needs a value"}"#)
            exit(2)
        }
        parsedOptions[argument] = arguments[index + 1]
        index += 1
    } else if parsedCommand == nil {
        parsedCommand = argument
    } else {
        print(#"{"error":"usage","message":"unexpected argument"}"#)
        exit(2)
    }
    index += 1
}
let options = parsedOptions
let flags = parsedFlags
let command = parsedCommand

func seconds(_ name: String, _ fallback: Duration) -> Duration {
    guard let text = options[name], let value = Double(text) else { return fallback }
    return .milliseconds(Int(value * 1000))
}

let store: any SecretStore
if let directory = options["--plain-file"] {
    store = PlainFileStore(directory: directory)
} else if flags.contains("--kernel-keyring") {
    store = KernelKeyringStore()
} else {
    let policies: [String: SecretServiceStore.PromptPolicy] = [
        "never": .never, "unlock": .unlock, "create": .unlockAndCreateCollection,
    ]
    guard let prompts = flags.contains("--no-prompt") ? .never : policies[options["--prompts"] ?? "unlock"] else {
        print(#"{"error":"usage","message":"--prompts is never, unlock or create"}"#)
        exit(2)
    }
    store = SecretServiceStore(
        timeout: seconds("--timeout", .seconds(5)), promptTimeout: seconds("--prompt-timeout", .seconds(120)), prompts: prompts)
}

func group() throws(SecretStoreError) -> SecretGroup { try SecretGroup(options["--group"] ?? "") }

func key() throws(SecretStoreError) -> ItemKey {
    ItemKey(
        group: try group(), issuer: options["--issuer"] ?? "", clientID: options["--client-id"] ?? "",
        account: options["--account"] ?? "", kind: options["--kind"] ?? "tokens")
}

let showSecret = flags.contains("--show-secret")
let repetitions = max(1, Int(options["--repeat"] ?? "1") ?? 1)
for attempt in 1...repetitions {
    let last = attempt == repetitions
    do throws(SecretStoreError) {
        switch command {
        case "save":
            let location = try await store.save(readStandardInput(), for: try key(), label: options["--label"] ?? "")
            print(#"{"saved":true,"location":\#(json(location))}"#)
        case "lookup":
            guard let item = try await store.item(for: try key()) else {
                print(#"{"found":false}"#)
                if last { exit(1) } else { continue }
            }
            print(#"{"found":true,"item":\#(json(item, showSecret: showSecret))}"#)
        case "list":
            let query = ItemQuery(
                group: try group(), issuer: options["--issuer"], clientID: options["--client-id"],
                account: options["--account"], kind: options["--kind"])
            let items = try await store.items(matching: query, loadSecrets: flags.contains("--secrets"))
            print(#"{"items":[\#(items.map { json($0, showSecret: showSecret) }.joined(separator: ","))]}"#)
        case "delete":
            let deleted = try await store.delete(try key())
            print(#"{"deleted":\#(deleted)}"#)
            if !deleted && last { exit(1) }
        case "delete-all":
            let count = try await store.deleteAll(in: try group())
            print(#"{"deleted":\#(count)}"#)
        case "prepare-and-save":
            let prepared = try await store.prepareToSave(in: try group())
            let location = try await store.save(readStandardInput(), for: try key(), label: options["--label"] ?? "")
            print(#"{"saved":true,"prepared":\#(json(prepared.location)),"location":\#(json(location))}"#)
        case "status", "prepare":
            let status =
                command == "status" ? try await store.storageStatus(for: try group()) : try await store.prepareToSave(in: try group())
            print(
                #"{"location":\#(json(status.location)),"groupCollectionExists":\#(status.groupCollectionExists),"provider":\#(status.provider.map(json) ?? "null"),"itemCount":\#(status.itemCount),"description":\#(json(status.description))}"#
            )
        default:
            print(#"{"error":"usage","message":"commands: save lookup list delete delete-all status prepare prepare-and-save"}"#)
            exit(2)
        }
    } catch {
        print(#"{"error":\#(json(kindName(of: error))),"message":\#(json(error.description))}"#)
        if last { exit(exitCode(for: error)) }
    }
}
