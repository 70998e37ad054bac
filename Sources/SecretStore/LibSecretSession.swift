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
    var collectionPath: String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[..<slash])
    }
}

/// A collection as the Secret Service reported it.
struct FoundCollection {
    var path: String
    var label: String
    var isLocked: Bool
    /// Referenced `SecretCollection *`, released by ``LibSecretSession/release(_:)``.
    var object: UnsafeMutablePointer<SecretCollection>
}

/// libsecret state of the process and the operations on it. Lives on ``LibSecretThread``
/// and is only used there.
final class LibSecretSession {
    private var connection: OpaquePointer?
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
        if g_dbus_proxy_get_name_owner(proxy(made)) == nil {
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

    private var schema: UnsafeMutablePointer<SecretSchema> {
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
    /// locked ones included (never unlocking). With `loadSecrets`, the secrets of the
    /// unlocked ones are read in the same batch. When `withCollections`, the collections
    /// are loaded concurrently (their labels say where items live).
    func search(
        _ attributes: [(String, String)], loadSecrets: Bool, withCollections: Bool, _ options: LibSecretOptions,
        _ thread: LibSecretThread
    ) throws(SecretStoreError) -> ([FoundItem], [FoundCollection]) {
        let service = try connect(options, thread)
        let table = AttributeTable(attributes)
        let tablePointer = table.table
        let schema = self.schema
        var flags = SECRET_SEARCH_ALL.rawValue
        if loadSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
        let searchFlags = SecretSearchFlags(rawValue: flags)
        var calls: [(String, AsyncCall.Start)] = [
            ("search for items", { secret_service_search(service, schema, tablePointer, searchFlags, $0, $1, $2) })
        ]
        if withCollections {
            calls.append(("list collections", { secret_service_load_collections(service, $0, $1, $2) }))
        }
        let done = try AsyncCall.runAll(calls, timeout: options.timeout, on: thread)
        let list = try done[0].finish { secret_service_search_finish(service, $0, $1) }
        let items = consumeObjectList(list) { Self.read(item: $0.assumingMemoryBound(to: SecretItem.self)) }
        var collections: [FoundCollection] = []
        if withCollections {
            _ = try done[1].finish { secret_service_load_collections_finish(service, $0, $1) }
            collections = loadedCollections(service)
        }
        withExtendedLifetime(table) {}
        return (items, collections)
    }

    private static func read(item: UnsafeMutablePointer<SecretItem>) -> FoundItem {
        let attributes = secret_item_get_attributes(item)
        defer { if let attributes { g_hash_table_unref(attributes) } }
        let label = secret_item_get_label(item)
        defer { g_free(label) }
        var secret: [UInt8]?
        if let value = secret_item_get_secret(item) {
            var length = 0
            if let bytes = secret_value_get(value, &length) {
                secret = [UInt8](UnsafeRawBufferPointer(start: bytes, count: length))
            }
            secret_value_unref(UnsafeMutableRawPointer(value))
        }
        return FoundItem(
            path: String(cString: g_dbus_proxy_get_object_path(proxy(item))),
            attributes: AttributeTable.read(attributes),
            label: label.map { String(cString: $0) } ?? "",
            isLocked: secret_item_get_locked(item) != 0,
            created: UInt64(secret_item_get_created(item)),
            modified: UInt64(secret_item_get_modified(item)),
            secret: secret)
    }

    /// The collections currently known to the service proxy (after loading them).
    private func loadedCollections(_ service: UnsafeMutablePointer<SecretService>) -> [FoundCollection] {
        var result: [FoundCollection] = []
        var node = secret_service_get_collections(service)
        let list = node
        while let current = node {
            if let data = current.pointee.data {
                let collection = data.assumingMemoryBound(to: SecretCollection.self)
                let label = secret_collection_get_label(collection)
                g_object_ref(data)
                result.append(
                    FoundCollection(
                        path: String(cString: g_dbus_proxy_get_object_path(proxy(collection))),
                        label: label.map { String(cString: $0) } ?? "",
                        isLocked: secret_collection_get_locked(collection) != 0,
                        object: collection))
                g_free(label)
            }
            node = current.pointee.next
        }
        g_list_free_full(list, g_object_unref)
        return result
    }

    func collections(_ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) -> [FoundCollection] {
        let service = try connect(options, thread)
        let call = try AsyncCall.run("list collections", timeout: options.timeout, on: thread) {
            secret_service_load_collections(service, $0, $1, $2)
        }
        _ = try call.finish { secret_service_load_collections_finish(service, $0, $1) }
        return loadedCollections(service)
    }

    func release(_ collections: [FoundCollection]) {
        for collection in collections { g_object_unref(UnsafeMutableRawPointer(collection.object)) }
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

    // MARK: Changing

    /// Asks the provider to unlock `paths` (it shows its own prompt). Returns how many
    /// objects were unlocked: 0 when the prompt was dismissed or could not be shown.
    func unlock(_ paths: [String], _ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) -> Int {
        let service = try connect(options, thread)
        var cPaths: [UnsafeMutablePointer<CChar>?] = paths.map { strdup($0) } + [nil]
        defer { for pointer in cPaths { free(pointer) } }
        let count = try cPaths.withUnsafeMutableBufferPointer { buffer throws(SecretStoreError) -> Int32 in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(to: UnsafePointer<CChar>?.self)
            let call = try AsyncCall.run("unlock the collection", timeout: options.promptTimeout, on: thread) {
                secret_service_unlock_dbus_paths(service, base, $0, $1, $2)
            }
            return try call.finish { result, error -> Int32 in
                var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
                let count = secret_service_unlock_dbus_paths_finish(service, result, &unlocked, error)
                g_strfreev(unlocked)
                return count
            }
        }
        return Int(count)
    }

    /// Creates a collection labelled `label`; the provider may show a password prompt.
    func createCollection(_ label: String, _ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError)
        -> FoundCollection
    {
        let service = try connect(options, thread)
        let call = try AsyncCall.run("create the collection ‘\(label)’", timeout: options.promptTimeout, on: thread) {
            secret_collection_create(service, label, nil, SECRET_COLLECTION_CREATE_NONE, $0, $1, $2)
        }
        let collection = try call.finish { secret_collection_create_finish($0, $1) }
        guard let collection else {
            throw .providerFailure(operation: "create the collection ‘\(label)’", message: "no collection was returned")
        }
        return FoundCollection(
            path: String(cString: g_dbus_proxy_get_object_path(proxy(collection))), label: label,
            isLocked: secret_collection_get_locked(collection) != 0, object: collection)
    }

    /// Writes one item into `collection`, replacing an item with the same attributes there.
    /// Returns the item's object path.
    func createItem(
        in collection: FoundCollection, attributes: [(String, String)], label: String, secret: [UInt8],
        _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> String {
        let table = AttributeTable(attributes)
        let tablePointer = table.table
        let schema = self.schema
        let value = secret.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { secret_value_new($0.baseAddress, buffer.count, "text/plain") }
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        let object = collection.object
        let call = try AsyncCall.run("save the item", timeout: options.timeout, on: thread) {
            secret_item_create(object, schema, tablePointer, label, value, SECRET_ITEM_CREATE_REPLACE, $0, $1, $2)
        }
        let item = try call.finish { secret_item_create_finish($0, $1) }
        withExtendedLifetime(table) {}
        guard let item else {
            throw .providerFailure(operation: "save the item", message: "no item was returned")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(item)) }
        return String(cString: g_dbus_proxy_get_object_path(proxy(item)))
    }

    /// Deletes the items at `paths`, all at once.
    func delete(_ paths: [String], _ options: LibSecretOptions, _ thread: LibSecretThread) throws(SecretStoreError) {
        guard !paths.isEmpty else { return }
        let service = try connect(options, thread)
        let calls: [(String, AsyncCall.Start)] = paths.map { path in
            ("delete an item", { secret_service_delete_item_dbus_path(service, path, $0, $1, $2) })
        }
        for call in try AsyncCall.runAll(calls, timeout: options.timeout, on: thread) {
            _ = try call.finish { secret_service_delete_item_dbus_path_finish(service, $0, $1) }
        }
    }
}

/// Every libsecret object here is a GDBusProxy (its first member).
private func proxy<T>(_ object: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<GDBusProxy> {
    UnsafeMutableRawPointer(object).assumingMemoryBound(to: GDBusProxy.self)
}

extension String {
    var trimmingSuffixNewline: String {
        var text = self
        while text.last == "\n" { text.removeLast() }
        return text
    }
}
