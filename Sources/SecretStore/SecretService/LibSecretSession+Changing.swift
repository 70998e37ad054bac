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
        guard let object = collection.object else {
            throw .providerFailure(operation: "save the item", message: "the collection was not loaded")
        }
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
