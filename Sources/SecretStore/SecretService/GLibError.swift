import CLibSecret

/// Turns GLib/GDBus errors into ``SecretStoreError``.
enum GLibError {
    static func map(_ error: UnsafeMutablePointer<GError>, operation: String) -> SecretStoreError {
        let remoteName = remoteErrorName(error)
        if remoteName != nil { g_dbus_error_strip_remote_error(error) }
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        switch remoteName {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .noSecretService(detail: message)
        case let name? where name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            return .noSecretService(detail: message)
        case "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
            "org.freedesktop.DBus.Error.TimedOut":
            return .timedOut(operation: operation, seconds: 25)
        case "org.freedesktop.Secret.Error.IsLocked":
            return .locked(collection: "")  // callers that know the collection name it
        default:
            break
        }
        if error.pointee.domain == g_io_error_quark() && error.pointee.code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) {
            return .timedOut(operation: operation, seconds: 25)
        }
        return .providerFailure(operation: operation, message: message)
    }

    static func remoteErrorName(_ error: UnsafeMutablePointer<GError>) -> String? {
        guard g_dbus_error_is_remote_error(error) != 0, let name = g_dbus_error_get_remote_error(error) else {
            return nil
        }
        defer { g_free(name) }
        return String(cString: name)
    }

    static func isUnknownObject(_ error: SecretStoreError) -> Bool {
        if case .providerFailure(_, let message) = error { return message.hasPrefix("No such secret") }
        return false
    }
}

/// A GHashTable of strings to strings, as libsecret takes attributes.
struct AttributeTable: ~Copyable {
    let table: OpaquePointer

    init(_ pairs: [(String, String)]) {
        table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        for (key, value) in pairs {
            g_hash_table_insert(table, g_strdup(key), g_strdup(value))
        }
    }

    deinit { g_hash_table_unref(table) }

    /// Reads a string-to-string GHashTable (does not take ownership).
    static func read(_ table: OpaquePointer?) -> [String: String] {
        var result: [String: String] = [:]
        forEach(table) { key, value in
            result[key] = String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        return result
    }

    /// Calls `body` with each entry of a GHashTable whose keys are C strings (does not take
    /// ownership); entries with a NULL key or value are skipped.
    static func forEach(_ table: OpaquePointer?, _ body: (String, UnsafeMutableRawPointer) -> Void) {
        guard let table else { return }
        var iterator = GHashTableIter()
        g_hash_table_iter_init(&iterator, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
            guard let key, let value else { continue }
            body(String(cString: key.assumingMemoryBound(to: CChar.self)), value)
        }
    }
}

/// A GHashTable of D-Bus property names to values (`a{sv}`), as libsecret takes an item's or a
/// collection's properties. Takes the (floating) values.
struct PropertyTable: ~Copyable {
    let table: OpaquePointer

    init(_ properties: [String: OpaquePointer?]) {
        table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free) { value in
            if let value { g_variant_unref(OpaquePointer(value)) }
        }
        for (name, value) in properties {
            guard let value else { continue }
            g_hash_table_insert(table, g_strdup(name), UnsafeMutableRawPointer(g_variant_ref_sink(value)))
        }
    }

    deinit { g_hash_table_unref(table) }
}
