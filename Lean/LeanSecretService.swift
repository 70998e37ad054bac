import AuthKitCore
import CLibSecret
import CLibc

/// The lean client's read of a group's token records from the Secret Service, when there is no
/// agent: libsecret opened only now (through authkit's own door, `CLibSecret`), the same calls
/// authkit's `SecretServiceStore` makes to read (search, then the secrets and the items'
/// properties together), never an unlock, never a prompt, and bounded in time. Any failure is
/// nil: the caller hands the command to `authkit`, which reads the store its own way and says
/// what went wrong. What the items hold is judged by `StoredTokenRecord.chosen`.
enum LeanSecretService {
    /// The bound on the whole read, every call in it (authkit's bound on one exchange with the
    /// provider, `SecretServiceStore.timeout`): a provider that does not answer costs at most
    /// this before authkit is run, which then waits its own time.
    static let timeoutMilliseconds: Int64 = 5000

    /// The items of `group`'s token records (`StoredTokenItem`), or nil.
    static func tokenItems(group: String) -> [StoredTokenItem]? {
        // (GLib ignores SIGPIPE for its sockets: what authkit inherits is put back before it runs.)
        LeanProcess.keepSignalDispositions()
        guard ak_libsecret_load(nil, 0) == 0 else { return nil }
        let context = g_main_context_new()
        g_main_context_push_thread_default(context)
        let deadline = monotonicMilliseconds() + timeoutMilliseconds
        guard let bus = run(context, deadline, [{ g_bus_get(G_BUS_TYPE_SESSION, nil, ready, $0) }]),
            let connection = finish({ g_bus_get_finish(bus[0], $0) }) ?? nil,
            let got = run(context, deadline, [{ secret_service_get(SECRET_SERVICE_NONE, nil, ready, $0) }]),
            let service = finish({ secret_service_get_finish(got[0], $0) }) ?? nil
        else { return nil }
        // No provider on the bus: authkit asks the bus to start one.
        let proxy = UnsafeMutableRawPointer(service).assumingMemoryBound(to: GDBusProxy.self)
        guard let owner = g_dbus_proxy_get_name_owner(proxy) else { return nil }
        g_free(owner)

        let schema = schemaPointer()
        let query = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)
        for (name, value) in [("group", group), ("kind", StoredTokenItem.kind)] {
            g_hash_table_insert(query, g_strdup(name), g_strdup(value))
        }
        guard
            let searched = run(
                context, deadline,
                [
                    { secret_service_search_for_dbus_paths(service, schema, query, nil, ready, $0) },
                    { secret_service_ensure_session(service, nil, ready, $0) },
                ])
        else { return nil }
        var unlocked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var locked: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        guard let found = finish({ secret_service_search_for_dbus_paths_finish(service, searched[0], &unlocked, &locked, $0) }),
            found != 0, let session = finish({ secret_service_ensure_session_finish(service, searched[1], $0) }), session != 0
        else { return nil }
        let lockedCount = count(locked)
        let paths = count(unlocked)
        var items = [StoredTokenItem](repeating: StoredTokenItem(attributes: [:], isLocked: true, secret: nil), count: lockedCount)
        guard paths > 0, let unlocked else { return items }

        // The secrets and every item's properties at once: one more round trip.
        let itemPaths = UnsafeMutablePointer<UnsafePointer<gchar>?>.allocate(capacity: paths + 1)
        for index in 0..<paths { itemPaths[index] = UnsafePointer(unlocked[index]) }
        itemPaths[paths] = nil
        var starts: [(UnsafeMutableRawPointer) -> Void] = [
            { secret_service_get_secrets_for_dbus_paths(service, itemPaths, nil, ready, $0) }
        ]
        for index in 0..<paths {
            let path = unlocked[index]
            starts.append { data in
                var children: [OpaquePointer?] = [g_variant_new_string("org.freedesktop.Secret.Item")]
                let parameters = g_variant_new_tuple(&children, 1)
                g_dbus_connection_call(
                    connection, "org.freedesktop.secrets", path, "org.freedesktop.DBus.Properties", "GetAll", parameters, nil,
                    G_DBUS_CALL_FLAGS_NONE, -1, nil, ready, data)
            }
        }
        guard let read = run(context, deadline, starts),
            let secrets = finish({ secret_service_get_secrets_for_dbus_paths_finish(service, read[0], $0) }) ?? nil
        else { return nil }
        for index in 0..<paths {
            // (Any other shape from whoever owns the name is no answer: GLib would abort on it.)
            guard let reply = finish({ g_dbus_connection_call_finish(connection, read[index + 1], $0) }) ?? nil,
                let type = g_variant_get_type_string(reply), String(cString: type) == "(a{sv})"
            else { return nil }
            let properties = g_variant_get_child_value(reply, 0)
            var item = StoredTokenItem(attributes: attributes(properties), isLocked: flag(properties, "Locked"), secret: nil)
            if let value = lookup(secrets, unlocked[index]) {
                var length = 0
                if let bytes = secret_value_get(value, &length) {
                    item.secret = Array(UnsafeRawBufferPointer(start: bytes, count: length))
                }
            }
            items.append(item)
        }
        return items
    }

    /// Starts the calls together and iterates `context` until each has its result, or nil
    /// once `deadline` (monotonic milliseconds) has passed (the process then runs authkit:
    /// nothing is left to clean up).
    private static func run(_ context: OpaquePointer?, _ deadline: Int64, _ starts: [(UnsafeMutableRawPointer) -> Void])
        -> [OpaquePointer]?
    {
        let left = deadline - monotonicMilliseconds()
        guard left > 0 else { return nil }
        let slots = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: starts.count)
        slots.initialize(repeating: nil, count: starts.count)
        for (index, start) in starts.enumerated() { start(UnsafeMutableRawPointer(slots + index)) }
        let expired = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        expired.pointee = 0
        let timer = g_timeout_source_new(UInt32(left))
        g_source_set_callback(timer, timerFired, UnsafeMutableRawPointer(expired), nil)
        g_source_attach(timer, context)
        var results: [OpaquePointer] = []
        while expired.pointee == 0 {
            results = (0..<starts.count).compactMap { slots[$0] }
            if results.count == starts.count { break }
            g_main_context_iteration(context, 1)
        }
        g_source_destroy(timer)
        return results.count == starts.count ? results : nil
    }

    /// A `_finish` call's value, or nil when it reports an error.
    private static func finish<T>(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<GError>?>) -> T) -> T? {
        var error: UnsafeMutablePointer<GError>?
        let value = body(&error)
        if let error {
            g_error_free(error)
            return nil
        }
        return value
    }

    private static func count(_ vector: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> Int {
        guard let vector else { return 0 }
        var index = 0
        while vector[index] != nil { index += 1 }
        return index
    }

    /// authkit's schema (`ItemSchema`): its name, matched by the search, and its attributes.
    private static func schemaPointer() -> UnsafeMutablePointer<SecretSchema>? {
        let names = g_hash_table_new(g_str_hash, g_str_equal)
        // (GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING) is NULL.)
        for name in StoredTokenItem.schemaAttributes { g_hash_table_insert(names, g_strdup(name), nil) }
        return secret_schema_newv(StoredTokenItem.schema, SECRET_SCHEMA_NONE, names)
    }

    private static func lookup(_ table: OpaquePointer?, _ path: UnsafeMutablePointer<gchar>?) -> OpaquePointer? {
        var iterator = GHashTableIter(dummy1: nil, dummy2: nil, dummy3: nil, dummy4: 0, dummy5: 0, dummy6: nil)
        g_hash_table_iter_init(&iterator, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iterator, &key, &value) != 0 {
            if let key, let path, strcmp(key.assumingMemoryBound(to: CChar.self), path) == 0 { return OpaquePointer(value) }
        }
        return nil
    }

    /// A property of type `b` of a GetAll reply's `a{sv}`; false when it is absent or another type.
    private static func flag(_ properties: OpaquePointer?, _ name: String) -> Bool {
        guard let value = property(properties, name, "b") else { return false }
        return g_variant_get_boolean(value) != 0
    }

    /// The `Attributes` property (`a{ss}`).
    private static func attributes(_ properties: OpaquePointer?) -> [String: String] {
        guard let value = property(properties, "Attributes", "a{ss}") else { return [:] }
        var result: [String: String] = [:]
        for index in 0..<g_variant_n_children(value) {
            let entry = g_variant_get_child_value(value, index)
            let key = g_variant_get_child_value(entry, 0)
            let text = g_variant_get_child_value(entry, 1)
            if let key = g_variant_get_string(key, nil), let text = g_variant_get_string(text, nil) {
                result[String(cString: key)] = String(cString: text)
            }
        }
        return result
    }

    private static func property(_ properties: OpaquePointer?, _ name: String, _ type: String) -> OpaquePointer? {
        guard let properties, let value = g_variant_lookup_value(properties, name, nil), let found = g_variant_get_type_string(value),
            String(cString: found) == type
        else { return nil }
        return value
    }
}

/// A call's completion: its result kept (referenced) in the slot it was given.
private let ready: GAsyncReadyCallback = { _, result, data in
    guard let data, let result else { return }
    data.assumingMemoryBound(to: OpaquePointer?.self).pointee = OpaquePointer(g_object_ref(UnsafeMutableRawPointer(result)))
}

private let timerFired: GSourceFunc = { data in
    data?.assumingMemoryBound(to: Int32.self).pointee = 1
    return 0
}
