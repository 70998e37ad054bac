import CLibSecret

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How ``SecretServiceStore`` bounds and prompts; copied into every job.
struct LibSecretOptions: Sendable {
    var timeout: Duration
    var promptTimeout: Duration
    var allowsPrompts: Bool
}

/// An item as the Secret Service reported it.
struct FoundItem {
    var path: String
    var attributes: [String: String]
    var label: String
    var isLocked: Bool
    var created: UInt64
    var modified: UInt64
    var secret: [UInt8]?

    /// gnome-keyring, KeePassXC and ksecretd all name items `<collection path>/<id>`.
    var collectionPath: String { Self.collectionPath(of: path) }

    static func collectionPath(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }
}

/// A collection as the Secret Service reported it.
struct FoundCollection {
    var path: String
    var label: String
    var isLocked: Bool
}

/// libsecret state of the process and the operations on it. Lives on ``LibSecretThread``
/// and is only used there.
final class LibSecretSession {
    private(set) var connection: OpaquePointer?
    private var service: UnsafeMutablePointer<SecretService>?
    private var schemaPointer: UnsafeMutablePointer<SecretSchema>?

    // MARK: Connecting

    /// The session bus connection and the `SecretService` proxy, made once per process.
    /// A failure to reach the bus is ``SecretStoreError/noSessionBus(detail:)``, told apart
    /// here because it is the one step that needs the bus and nothing else.
    func connect(_ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError)
        -> UnsafeMutablePointer<SecretService>
    {
        if let service { return service }
        if connection == nil {
            let call = try AsyncCall.run("connect to the D-Bus session bus", timeout: options.timeout, on: thread) {
                g_bus_get(G_BUS_TYPE_SESSION, $0, $1, $2)
            }
            do {
                connection = try call.finish { g_bus_get_finish($0, $1) }
            } catch {
                if case .providerFailure(_, let message) = error { throw .noSessionBus(detail: message) }
                throw error
            }
        }
        let call = try AsyncCall.run("connect to the Secret Service", timeout: options.timeout, on: thread) {
            secret_service_get(SECRET_SERVICE_NONE, $0, $1, $2)
        }
        let made = try call.finish { secret_service_get_finish($0, $1) }
        guard let made else {
            throw .providerFailure(operation: "connect to the Secret Service", message: "libsecret returned no service")
        }
        // GDBus does not fail a proxy whose name has no owner: ask the bus, so that "nothing
        // provides the Secret Service" is told apart from later errors.
        let owner = g_dbus_proxy_get_name_owner(proxy(made))
        defer { g_free(owner) }
        if owner == nil {
            try ensureProviderRuns(options, thread)
        }
        service = made
        return made
    }

    /// Asks the bus to start the provider (D-Bus activation), which fails with
    /// ServiceUnknown when none is installed.
    private func ensureProviderRuns(_ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) {
        let connection = self.connection
        let call = try AsyncCall.run("start the Secret Service", timeout: options.timeout, on: thread) {
            var name = g_variant_new_string("org.freedesktop.secrets")
            let flags = g_variant_new_uint32(0)
            var children: [OpaquePointer?] = [name, flags]
            name = nil
            let parameters = g_variant_new_tuple(&children, 2)
            g_dbus_connection_call(
                connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "StartServiceByName", parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, $0, $1, $2)
        }
        let reply = try call.finish { g_dbus_connection_call_finish(connection, $0, $1) }
        if let reply { g_variant_unref(reply) }
    }

    var schema: UnsafeMutablePointer<SecretSchema> {
        if let schemaPointer { return schemaPointer }
        let attributes = g_hash_table_new(g_str_hash, g_str_equal)
        for name in ItemSchema.keyAttributes + [ItemSchema.formatAttribute] {
            // GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING) is NULL; the names live as long as the schema.
            g_hash_table_insert(attributes, g_strdup(name), nil)
        }
        let made = secret_schema_newv(ItemSchema.name, SECRET_SCHEMA_NONE, attributes)!
        g_hash_table_unref(attributes)
        schemaPointer = made
        return made
    }

    // MARK: Reading

    /// Items of our schema whose attributes include `attributes`, in every collection,
    /// locked ones included (never unlocking), with the label and lock state of the
    /// collections they are in. With `loadSecrets`, the secrets of the unlocked ones too.
    ///
    /// This is the hot path of every `authkit token`, so it talks to the service by object
    /// path instead of building a GDBusProxy (with its property load and signal match) per
    /// item and collection, and overlaps what can overlap: SearchItems with OpenSession,
    /// then GetSecrets with the properties of the items and their collections. That is as
    /// many sequential round trips as `secret-tool lookup` makes.
    /// With `openSession`, the session a write encodes its secret with is opened alongside.
    func search(
        _ attributes: [(String, String)], loadSecrets: Bool, openSession: Bool = false, _ options: LibSecretOptions,
        _ thread: LibSecretThread
    ) throws(SecretStoreError) -> ([FoundItem], [FoundCollection]) {
        let service = try connect(options, thread)
        let table = AttributeTable(attributes)
        let tablePointer = table.table
        let schema = self.schema
        var first: [(String, AsyncCall.Start)] = [
            ("search for items", { secret_service_search_for_dbus_paths(service, schema, tablePointer, $0, $1, $2) })
        ]
        if loadSecrets || openSession {
            first.append(("open a session", { secret_service_ensure_session(service, $0, $1, $2) }))
        }
        let searched = try AsyncCall.runAll(first, timeout: options.timeout, on: thread)
        withExtendedLifetime(table) {}
        var unlockedPaths: [String] = []
        var lockedPaths: [String] = []
        _ = try searched[0].finish { result, error -> Int32 in
            var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            let ok = secret_service_search_for_dbus_paths_finish(service, result, &unlocked, &locked, error)
            unlockedPaths = Self.strings(unlocked)
            lockedPaths = Self.strings(locked)
            g_strfreev(unlocked)
            g_strfreev(locked)
            return ok
        }
        if loadSecrets || openSession { _ = try searched[1].finish { secret_service_ensure_session_finish(service, $0, $1) } }
        let itemPaths = unlockedPaths + lockedPaths
        guard !itemPaths.isEmpty else { return ([], []) }

        var collectionPaths: [String] = []
        for path in itemPaths {
            let collection = FoundItem.collectionPath(of: path)
            if !collectionPaths.contains(collection) { collectionPaths.append(collection) }
        }
        let connection = self.connection
        var second: [(String, AsyncCall.Start)] = []
        let cPaths = CStringArray(unlockedPaths)
        if loadSecrets && !unlockedPaths.isEmpty {
            let pointer = cPaths.pointer
            second.append(("read the secrets", { secret_service_get_secrets_for_dbus_paths(service, pointer, $0, $1, $2) }))
        }
        for path in itemPaths {
            second.append(("read an item", Self.getAll(connection, path, "org.freedesktop.Secret.Item")))
        }
        for path in collectionPaths {
            second.append(("read a collection", Self.getAll(connection, path, "org.freedesktop.Secret.Collection")))
        }
        let read = try AsyncCall.runAll(second, timeout: options.timeout, on: thread)
        withExtendedLifetime(cPaths) {}
        var secrets: [String: [UInt8]] = [:]
        var next = 0
        if loadSecrets && !unlockedPaths.isEmpty {
            let values = try read[0].finish { secret_service_get_secrets_for_dbus_paths_finish(service, $0, $1) }
            secrets = Self.secrets(values)
            if let values { g_hash_table_unref(values) }
            next = 1
        }
        var items: [FoundItem] = []
        for path in itemPaths {
            let properties = try Properties(read[next].finish { g_dbus_connection_call_finish(connection, $0, $1) })
            next += 1
            items.append(
                FoundItem(
                    path: path, attributes: properties.attributes("Attributes"), label: properties.string("Label"),
                    isLocked: lockedPaths.contains(path) || properties.bool("Locked"),
                    created: properties.uint64("Created"), modified: properties.uint64("Modified"),
                    secret: secrets[path]))
        }
        var collections: [FoundCollection] = []
        for path in collectionPaths {
            // A collection that vanished meanwhile is simply unnamed.
            let properties = try? Properties(read[next].finish { g_dbus_connection_call_finish(connection, $0, $1) })
            next += 1
            collections.append(
                FoundCollection(path: path, label: properties?.string("Label") ?? "", isLocked: properties?.bool("Locked") ?? false))
        }
        return (items, collections)
    }

    /// org.freedesktop.DBus.Properties.GetAll of `interface` at `path` on the provider.
    static func getAll(_ connection: OpaquePointer?, _ path: String, _ interface: String) -> AsyncCall.Start {
        return { cancellable, callback, data in
            var children: [OpaquePointer?] = [g_variant_new_string(interface)]
            let parameters = g_variant_new_tuple(&children, 1)
            g_dbus_connection_call(
                connection, "org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties", "GetAll", parameters,
                nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, data)
        }
    }

    private static func strings(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let vector else { return [] }
        var result: [String] = []
        var index = 0
        while let string = vector[index] {
            result.append(String(cString: string))
            index += 1
        }
        return result
    }

    /// Path → secret bytes from libsecret's table of `SecretValue`s.
    private static func secrets(_ table: OpaquePointer?) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        AttributeTable.forEach(table) { key, value in
            var length = 0
            guard let bytes = secret_value_get(OpaquePointer(value), &length) else { return }
            result[key] = [UInt8](UnsafeRawBufferPointer(start: bytes, count: length))
        }
        return result
    }

    /// Every collection's path, label and lock state, read from the service's `Collections`
    /// property and each collection's own properties — never its items: a provider may list an
    /// item it cannot show (gnome-keyring's "Unlock password for …" after an auto-unlock), and
    /// libsecret's collection proxies, which load every item, then fail every call.
    func collections(_ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) -> [FoundCollection] {
        _ = try connect(options, thread)
        let connection = self.connection
        let listed = try AsyncCall.run("list collections", timeout: options.timeout, on: thread) { cancellable, callback, data in
            var children: [OpaquePointer?] = [
                g_variant_new_string("org.freedesktop.Secret.Service"), g_variant_new_string("Collections"),
            ]
            let parameters = g_variant_new_tuple(&children, 2)
            g_dbus_connection_call(
                connection, "org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.DBus.Properties", "Get",
                parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, data)
        }
        let reply = try listed.finish { g_dbus_connection_call_finish(connection, $0, $1) }
        var paths: [String] = []
        if let reply {
            let boxed = g_variant_get_child_value(reply, 0)
            let value = g_variant_get_variant(boxed)
            if String(cString: g_variant_get_type_string(value)) == "ao" {
                for index in 0..<g_variant_n_children(value) {
                    let child = g_variant_get_child_value(value, index)
                    paths.append(String(cString: g_variant_get_string(child, nil)))
                    g_variant_unref(child)
                }
            }
            g_variant_unref(value)
            g_variant_unref(boxed)
            g_variant_unref(reply)
        }
        guard !paths.isEmpty else { return [] }
        let read = try AsyncCall.runAll(
            paths.map { ("read a collection", Self.getAll(connection, $0, "org.freedesktop.Secret.Collection")) },
            timeout: options.timeout, on: thread)
        var collections: [FoundCollection] = []
        for (path, call) in zip(paths, read) {
            // A collection that vanished meanwhile is left out.
            guard let properties = try? Properties(call.finish { g_dbus_connection_call_finish(connection, $0, $1) }) else {
                continue
            }
            collections.append(FoundCollection(path: path, label: properties.string("Label"), isLocked: properties.bool("Locked")))
        }
        return collections
    }

    /// The object path the `default` alias points to, or nil when there is none.
    func defaultCollectionPath(_ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) -> String? {
        let service = try connect(options, thread)
        let call = try AsyncCall.run("find the default collection", timeout: options.timeout, on: thread) {
            secret_service_read_alias_dbus_path(service, "default", $0, $1, $2)
        }
        let path = try call.finish { secret_service_read_alias_dbus_path_finish(service, $0, $1) }
        defer { g_free(path) }
        guard let path else { return nil }
        let text = String(cString: path)
        return text == "/" ? nil : text
    }

    /// The program owning `org.freedesktop.secrets`, from `/proc/<pid>/comm`.
    func providerName(_ options: LibSecretOptions, _ thread: LibSecretThread) -> String? {
        guard let connection else { return nil }
        let call = try? AsyncCall.run("ask for the provider's process", timeout: options.timeout, on: thread) {
            var children: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.secrets")]
            let parameters = g_variant_new_tuple(&children, 1)
            g_dbus_connection_call(
                connection, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "GetConnectionUnixProcessID", parameters, nil, G_DBUS_CALL_FLAGS_NONE, -1, $0, $1, $2)
        }
        guard let call, let reply = try? call.finish({ g_dbus_connection_call_finish(connection, $0, $1) }) else {
            return nil
        }
        defer { g_variant_unref(reply) }
        let child = g_variant_get_child_value(reply, 0)
        let pid = g_variant_get_uint32(child)
        g_variant_unref(child)
        let fd = open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = Glibc.read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self).trimmingSuffixNewline
    }
}

/// Every libsecret object here is a GDBusProxy (its first member).
func proxy<T>(_ object: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<GDBusProxy> {
    UnsafeMutableRawPointer(object).assumingMemoryBound(to: GDBusProxy.self)
}

extension String {
    var trimmingSuffixNewline: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
