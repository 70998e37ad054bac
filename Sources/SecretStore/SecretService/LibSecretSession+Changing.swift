import CLibSecret

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What changes the Secret Service: unlocking, creating a collection or an item, deleting.
extension LibSecretSession {
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
        let properties = PropertyTable(["org.freedesktop.Secret.Collection.Label": g_variant_new_string(label)])
        let table = properties.table
        let call = try AsyncCall.run("create the collection ‘\(label)’", timeout: options.promptTimeout, on: thread) {
            secret_service_create_collection_dbus_path(service, table, nil, SECRET_COLLECTION_CREATE_NONE, $0, $1, $2)
        }
        let path = try call.finish { secret_service_create_collection_dbus_path_finish(service, $0, $1) }
        withExtendedLifetime(properties) {}
        defer { g_free(path) }
        guard let path, String(cString: path) != "/" else {
            throw .providerFailure(operation: "create the collection ‘\(label)’", message: "No such secret collection was made")
        }
        return FoundCollection(path: String(cString: path), label: label, isLocked: false)
    }

    /// Writes a new item into the collection at `collectionPath` (never replacing one: a
    /// provider may answer a replacement with a prompt nobody can answer, as KeePassXC does).
    /// Returns the item's object path.
    func createItem(
        inCollection collectionPath: String, attributes: [(String, String)], label: String, secret: [UInt8],
        _ options: LibSecretOptions, _ thread: LibSecretThread
    ) throws(SecretStoreError) -> String {
        let service = try connect(options, thread)
        let stored = [(ItemSchema.schemaAttribute, ItemSchema.name)] + attributes
        let entries = stored.map { name, value in g_variant_new_dict_entry(g_variant_new_string(name), g_variant_new_string(value)) }
        let attributeArray = entries.withUnsafeBufferPointer { g_variant_new_array(nil, $0.baseAddress, gsize($0.count)) }
        let properties = PropertyTable([
            "org.freedesktop.Secret.Item.Label": g_variant_new_string(label),
            "org.freedesktop.Secret.Item.Attributes": attributeArray,
        ])
        let table = properties.table
        let value = Self.secretValue(secret)
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        let call = try AsyncCall.run("save the item", timeout: options.timeout, on: thread) {
            secret_service_create_item_dbus_path(service, collectionPath, table, value, SECRET_ITEM_CREATE_NONE, $0, $1, $2)
        }
        let path = try call.finish { secret_service_create_item_dbus_path_finish(service, $0, $1) }
        withExtendedLifetime(properties) {}
        defer { g_free(path) }
        guard let path, String(cString: path) != "/" else {
            throw .providerFailure(operation: "save the item", message: "no item was made")
        }
        return String(cString: path)
    }

    /// Replaces the secret of the existing item at `itemPath` (`Item.SetSecret`): the item keeps
    /// its place, label and attributes, and no provider asks anything.
    func setSecret(_ secret: [UInt8], ofItem itemPath: String, _ options: LibSecretOptions, _ thread: LibSecretThread)
        throws(SecretStoreError)
    {
        let service = try connect(options, thread)
        let connection = self.connection
        let value = Self.secretValue(secret)
        defer { secret_value_unref(UnsafeMutableRawPointer(value)) }
        // The session was opened by the search before; encoding needs it.
        guard let encoded = secret_service_encode_dbus_secret(service, value) else {
            throw .providerFailure(operation: "save the item", message: "no session with the provider is open")
        }
        g_variant_ref_sink(encoded)
        defer { g_variant_unref(encoded) }
        let call = try AsyncCall.run("save the item", timeout: options.timeout, on: thread) { cancellable, callback, data in
            var children: [OpaquePointer?] = [encoded]
            let parameters = g_variant_new_tuple(&children, 1)
            g_dbus_connection_call(
                connection, "org.freedesktop.secrets", itemPath, "org.freedesktop.Secret.Item", "SetSecret", parameters, nil,
                G_DBUS_CALL_FLAGS_NONE, -1, cancellable, callback, data)
        }
        let reply = try call.finish { g_dbus_connection_call_finish(connection, $0, $1) }
        if let reply { g_variant_unref(reply) }
    }

    private static func secretValue(_ secret: [UInt8]) -> OpaquePointer? {
        secret.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { secret_value_new($0.baseAddress, buffer.count, "text/plain") }
        }
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
