// store-lookup: one account's record looked up through SecretStore, as a whole process — the
// work `authkit token` does before printing a token. scripts/bench-store times it next to
// `secret-tool lookup` of the same item.
//
//   store-lookup --group G --issuer I --client-id C --account A [--kind K]          prints the record's byte count
//   store-lookup --save --group G --issuer I --client-id C --account A [--kind K]   stores stdin as the record
//
// Exit status: 0 found (or saved), 1 not found, 2 usage, 3 store error (message on stderr).
// Deliberately lean: SecretStore only, no argument parser, no Foundation.
import SecretStore

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String, _ status: Int32) -> Never {
    let line = Array("store-lookup: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(status)
}

var values: [String: String] = [:]
var save = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    if argument == "--save" {
        save = true
    } else if let value = arguments.popFirst() {
        values[argument] = value
    } else {
        fail("\(argument) needs a value", 2)
    }
}

do throws(SecretStoreError) {
    let key = ItemKey(
        group: try SecretGroup(values["--group"] ?? ""), issuer: values["--issuer"] ?? "",
        clientID: values["--client-id"] ?? "", account: values["--account"] ?? "", kind: values["--kind"] ?? "tokens")
    let store = SecretServiceStore()
    if save {
        var record: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while case let count = read(0, &buffer, buffer.count), count > 0 { record += buffer[..<count] }
        let location = try await store.save(record, for: key)
        print("saved \(record.count) bytes in \(location)")
    } else {
        guard let item = try await store.item(for: key) else { exit(1) }
        print(try item.validatedSecret().count)
    }
} catch {
    fail(error.description, 3)
}
