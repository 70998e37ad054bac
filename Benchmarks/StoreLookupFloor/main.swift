// The floor for store-lookup, built by scripts/bench-store with swiftc (not a package target):
// the least a static-stdlib Swift program can do for the same lookup — one (libsecret linked,
// through the module map beside this file, not SecretStore's door that opens it on first use),
// secret_password_lookupv_sync, no SecretStore, no concurrency, no bounds. It tells how much
// of store-lookup's time is Swift start-up and how much is SecretStore.
import CLibSecret

func table(_ pairs: [(String, String?)]) -> OpaquePointer {
    let table = g_hash_table_new(g_str_hash, g_str_equal)!
    for (key, value) in pairs { g_hash_table_insert(table, g_strdup(key), value.map { g_strdup($0) }) }
    return table
}

var values: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst(), let value = arguments.popFirst() { values[name] = value }
let names = ["group", "issuer", "client_id", "account", "kind", "format"]
let schema = secret_schema_newv("io.github.authkit.Token", SECRET_SCHEMA_NONE, table(names.map { ($0, nil) }))
let attributes = table([
    ("group", values["--group"] ?? ""), ("issuer", values["--issuer"] ?? ""), ("client_id", values["--client-id"] ?? ""),
    ("account", values["--account"] ?? ""), ("kind", values["--kind"] ?? "tokens"),
])
if let password = secret_password_lookupv_sync(schema, attributes, nil, nil) { print(strlen(password)) }
