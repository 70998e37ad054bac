import CLibSecret

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The `a{sv}` reply of Properties.GetAll, read without building a proxy.
struct Properties: ~Copyable {
    private let dictionary: OpaquePointer?

    /// Takes ownership of the `(a{sv})` reply.
    init(_ reply: OpaquePointer?) throws(SecretStoreError) {
        guard let reply else {
            throw .providerFailure(operation: "read properties", message: "the provider sent no properties")
        }
        // Any other shape is no answer (GLib aborts on a child a reply does not have).
        guard String(cString: g_variant_get_type_string(reply)) == "(a{sv})" else {
            g_variant_unref(reply)
            throw .providerFailure(operation: "read properties", message: "the provider's properties are not a dictionary")
        }
        dictionary = g_variant_get_child_value(reply, 0)
        g_variant_unref(reply)
    }

    deinit { if let dictionary { g_variant_unref(dictionary) } }

    private func value(_ name: String, _ type: String) -> OpaquePointer? {
        guard let dictionary, let value = g_variant_lookup_value(dictionary, name, nil) else { return nil }
        // A provider sending another type is treated as not sending the property.
        guard String(cString: g_variant_get_type_string(value)) == type else {
            g_variant_unref(value)
            return nil
        }
        return value
    }

    func string(_ name: String) -> String {
        guard let value = value(name, "s") else { return "" }
        defer { g_variant_unref(value) }
        return String(cString: g_variant_get_string(value, nil))
    }

    func bool(_ name: String) -> Bool {
        guard let value = value(name, "b") else { return false }
        defer { g_variant_unref(value) }
        return g_variant_get_boolean(value) != 0
    }

    func uint64(_ name: String) -> UInt64 {
        guard let value = value(name, "t") else { return 0 }
        defer { g_variant_unref(value) }
        return UInt64(g_variant_get_uint64(value))
    }

    func attributes(_ name: String) -> [String: String] {
        guard let value = value(name, "a{ss}") else { return [:] }
        defer { g_variant_unref(value) }
        var result: [String: String] = [:]
        for index in 0..<g_variant_n_children(value) {
            let entry = g_variant_get_child_value(value, index)
            let key = g_variant_get_child_value(entry, 0)
            let text = g_variant_get_child_value(entry, 1)
            result[String(cString: g_variant_get_string(key, nil))] = String(cString: g_variant_get_string(text, nil))
            g_variant_unref(text)
            g_variant_unref(key)
            g_variant_unref(entry)
        }
        return result
    }
}

/// A NULL-terminated `const gchar **` that lives as long as this value.
final class CStringArray {
    let pointer: UnsafeMutablePointer<UnsafePointer<CChar>?>
    private let count: Int

    init(_ strings: [String]) {
        count = strings.count
        pointer = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointer[index] = UnsafePointer(strdup(string)) }
        pointer[strings.count] = nil
    }

    deinit {
        for index in 0..<count { free(UnsafeMutableRawPointer(mutating: pointer[index])) }
        pointer.deallocate()
    }
}
