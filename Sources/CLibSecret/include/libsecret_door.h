/* Written by scripts/generate-doors: edit the script, not this file. */
#ifndef AUTHKIT_LIBSECRET_DOOR_H
#define AUTHKIT_LIBSECRET_DOOR_H

#include <stddef.h>
#include <stdint.h>

/* libsecret's, GIO's, GObject's and GLib's types, checked against their headers by the script. */
#ifndef AK_LIBSECRET_SYSTEM_TYPES
typedef char gchar;
typedef int gint;
typedef unsigned int guint;
typedef int gboolean;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef unsigned long gsize;
typedef signed long gssize;
typedef uint32_t guint32;
typedef uint64_t guint64;
typedef guint32 GQuark;
typedef unsigned long GType;

typedef struct _GError GError;
struct _GError {
    GQuark domain;
    gint code;
    gchar *message;
};
typedef struct _GList GList;
struct _GList {
    gpointer data;
    GList *next;
    GList *prev;
};
typedef struct _GHashTable GHashTable;
typedef struct _GHashTableIter GHashTableIter;
struct _GHashTableIter {
    gpointer dummy1;
    gpointer dummy2;
    gpointer dummy3;
    int dummy4;
    gboolean dummy5;
    gpointer dummy6;
};
typedef struct _GMainContext GMainContext;
typedef struct _GSource GSource;
typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GTypeClass GTypeClass;
typedef struct _GData GData;
typedef struct _GTypeInstance GTypeInstance;
struct _GTypeInstance {
    GTypeClass *g_class;
};
typedef struct _GObject GObject;
struct _GObject {
    GTypeInstance g_type_instance;
    guint ref_count;
    GData *qdata;
};
typedef struct _GCancellable GCancellable;
struct _GCancellable {
    GObject parent_instance;
    void *priv;
};
typedef struct _GDBusProxy GDBusProxy;
struct _GDBusProxy {
    GObject parent_instance;
    void *priv;
};
typedef struct _SecretService SecretService;
struct _SecretService {
    GDBusProxy parent;
    void *pv;
};
typedef struct _SecretCollection SecretCollection;
struct _SecretCollection {
    GDBusProxy parent;
    void *pv;
};
typedef struct _SecretItem SecretItem;
struct _SecretItem {
    GDBusProxy parent_instance;
    void *pv;
};
typedef struct _SecretValue SecretValue;

typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer data);
typedef gboolean (*GSourceFunc)(gpointer user_data);
typedef void (*GDestroyNotify)(gpointer data);
typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);

typedef enum { G_BUS_TYPE_STARTER = -1, G_BUS_TYPE_NONE = 0, G_BUS_TYPE_SYSTEM = 1, G_BUS_TYPE_SESSION = 2 } GBusType;
typedef enum { G_DBUS_CALL_FLAGS_NONE = 0, G_DBUS_CALL_FLAGS_NO_AUTO_START = 1 } GDBusCallFlags;
typedef enum { G_IO_ERROR_CANCELLED = 19, G_IO_ERROR_TIMED_OUT = 24 } GIOErrorEnum;
typedef enum { SECRET_SERVICE_NONE = 0, SECRET_SERVICE_OPEN_SESSION = 2, SECRET_SERVICE_LOAD_COLLECTIONS = 4 } SecretServiceFlags;
typedef enum { SECRET_SCHEMA_NONE = 0, SECRET_SCHEMA_DONT_MATCH_NAME = 2 } SecretSchemaFlags;
typedef enum {
    SECRET_SCHEMA_ATTRIBUTE_STRING = 0,
    SECRET_SCHEMA_ATTRIBUTE_INTEGER = 1,
    SECRET_SCHEMA_ATTRIBUTE_BOOLEAN = 2
} SecretSchemaAttributeType;
typedef enum { SECRET_ITEM_CREATE_NONE = 0, SECRET_ITEM_CREATE_REPLACE = 2 } SecretItemCreateFlags;
typedef enum { SECRET_COLLECTION_CREATE_NONE = 0 } SecretCollectionCreateFlags;

typedef struct {
    const gchar *name;
    SecretSchemaAttributeType type;
} SecretSchemaAttribute;
typedef struct {
    const gchar *name;
    SecretSchemaFlags flags;
    SecretSchemaAttribute attributes[32];
    gint reserved;
    gpointer reserved1;
    gpointer reserved2;
    gpointer reserved3;
    gpointer reserved4;
    gpointer reserved5;
    gpointer reserved6;
    gpointer reserved7;
} SecretSchema;

#define SECRET_SERVICE_BUS_NAME "org.freedesktop.secrets"
#endif

/* Each function's type. */
typedef void ak_g_bus_get_fn(GBusType bus_type, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef GDBusConnection * ak_g_bus_get_finish_fn(GAsyncResult *res, GError **error);
typedef void ak_g_cancellable_cancel_fn(GCancellable *cancellable);
typedef GCancellable * ak_g_cancellable_new_fn(void);
typedef void ak_g_dbus_connection_call_fn(GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef GVariant * ak_g_dbus_connection_call_finish_fn(GDBusConnection *connection, GAsyncResult *res, GError **error);
typedef gchar * ak_g_dbus_error_get_remote_error_fn(const GError *error);
typedef gboolean ak_g_dbus_error_is_remote_error_fn(const GError *error);
typedef gboolean ak_g_dbus_error_strip_remote_error_fn(GError *error);
typedef gchar * ak_g_dbus_proxy_get_name_owner_fn(GDBusProxy *proxy);
typedef void ak_g_error_free_fn(GError *error);
typedef void ak_g_free_fn(gpointer mem);
typedef gboolean ak_g_hash_table_insert_fn(GHashTable *hash_table, gpointer key, gpointer value);
typedef void ak_g_hash_table_iter_init_fn(GHashTableIter *iter, GHashTable *hash_table);
typedef gboolean ak_g_hash_table_iter_next_fn(GHashTableIter *iter, gpointer *key, gpointer *value);
typedef GHashTable* ak_g_hash_table_new_fn(GHashFunc hash_func, GEqualFunc key_equal_func);
typedef GHashTable* ak_g_hash_table_new_full_fn(GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func);
typedef void ak_g_hash_table_unref_fn(GHashTable *hash_table);
typedef GQuark ak_g_io_error_quark_fn(void);
typedef gboolean ak_g_main_context_iteration_fn(GMainContext *context, gboolean may_block);
typedef GMainContext * ak_g_main_context_new_fn(void);
typedef void ak_g_main_context_push_thread_default_fn(GMainContext *context);
typedef gpointer ak_g_object_ref_fn(gpointer object);
typedef void ak_g_object_unref_fn(gpointer object);
typedef guint ak_g_source_attach_fn(GSource *source, GMainContext *context);
typedef void ak_g_source_destroy_fn(GSource *source);
typedef void ak_g_source_set_callback_fn(GSource *source, GSourceFunc func, gpointer data, GDestroyNotify notify);
typedef void ak_g_source_unref_fn(GSource *source);
typedef gboolean ak_g_str_equal_fn(gconstpointer v1, gconstpointer v2);
typedef guint ak_g_str_hash_fn(gconstpointer v);
typedef gchar* ak_g_strdup_fn(const gchar *str);
typedef void ak_g_strfreev_fn(gchar **str_array);
typedef GSource * ak_g_timeout_source_new_fn(guint interval);
typedef gboolean ak_g_variant_get_boolean_fn(GVariant *value);
typedef GVariant * ak_g_variant_get_child_value_fn(GVariant *value, gsize index_);
typedef const gchar * ak_g_variant_get_string_fn(GVariant *value, gsize *length);
typedef const gchar * ak_g_variant_get_type_string_fn(GVariant *value);
typedef guint32 ak_g_variant_get_uint32_fn(GVariant *value);
typedef guint64 ak_g_variant_get_uint64_fn(GVariant *value);
typedef GVariant * ak_g_variant_get_variant_fn(GVariant *value);
typedef GVariant * ak_g_variant_lookup_value_fn(GVariant *dictionary, const gchar *key, const GVariantType *expected_type);
typedef gsize ak_g_variant_n_children_fn(GVariant *value);
typedef GVariant * ak_g_variant_new_array_fn(const GVariantType *child_type, GVariant * const *children, gsize n_children);
typedef GVariant * ak_g_variant_new_dict_entry_fn(GVariant *key, GVariant *value);
typedef GVariant * ak_g_variant_new_string_fn(const gchar *string);
typedef GVariant * ak_g_variant_new_tuple_fn(GVariant * const *children, gsize n_children);
typedef GVariant * ak_g_variant_new_uint32_fn(guint32 value);
typedef GVariant * ak_g_variant_ref_sink_fn(GVariant *value);
typedef void ak_g_variant_unref_fn(GVariant *value);
typedef SecretSchema * ak_secret_schema_newv_fn(const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types);
typedef void ak_secret_service_create_collection_dbus_path_fn(SecretService *self, GHashTable *properties, const gchar *alias, SecretCollectionCreateFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gchar * ak_secret_service_create_collection_dbus_path_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef void ak_secret_service_create_item_dbus_path_fn(SecretService *self, const gchar *collection_path, GHashTable *properties, SecretValue *value, SecretItemCreateFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gchar * ak_secret_service_create_item_dbus_path_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef void ak_secret_service_delete_item_dbus_path_fn(SecretService *self, const gchar *item_path, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gboolean ak_secret_service_delete_item_dbus_path_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef GVariant * ak_secret_service_encode_dbus_secret_fn(SecretService *service, SecretValue *value);
typedef void ak_secret_service_ensure_session_fn(SecretService *self, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gboolean ak_secret_service_ensure_session_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef void ak_secret_service_get_fn(SecretServiceFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef SecretService * ak_secret_service_get_finish_fn(GAsyncResult *result, GError **error);
typedef void ak_secret_service_get_secrets_for_dbus_paths_fn(SecretService *self, const gchar **item_paths, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef GHashTable * ak_secret_service_get_secrets_for_dbus_paths_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef void ak_secret_service_read_alias_dbus_path_fn(SecretService *self, const gchar *alias, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gchar * ak_secret_service_read_alias_dbus_path_finish_fn(SecretService *self, GAsyncResult *result, GError **error);
typedef void ak_secret_service_search_for_dbus_paths_fn(SecretService *self, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gboolean ak_secret_service_search_for_dbus_paths_finish_fn(SecretService *self, GAsyncResult *result, gchar ***unlocked, gchar ***locked, GError **error);
typedef void ak_secret_service_unlock_dbus_paths_fn(SecretService *self, const gchar **paths, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
typedef gint ak_secret_service_unlock_dbus_paths_finish_fn(SecretService *self, GAsyncResult *result, gchar ***unlocked, GError **error);
typedef const gchar * ak_secret_value_get_fn(SecretValue *value, gsize *length);
typedef SecretValue * ak_secret_value_new_fn(const gchar *secret, gssize length, const gchar *content_type);
typedef void ak_secret_value_unref_fn(gpointer value);

/* Filled by ak_libsecret_load. */
struct ak_libsecret_functions {
    ak_g_bus_get_fn *g_bus_get;
    ak_g_bus_get_finish_fn *g_bus_get_finish;
    ak_g_cancellable_cancel_fn *g_cancellable_cancel;
    ak_g_cancellable_new_fn *g_cancellable_new;
    ak_g_dbus_connection_call_fn *g_dbus_connection_call;
    ak_g_dbus_connection_call_finish_fn *g_dbus_connection_call_finish;
    ak_g_dbus_error_get_remote_error_fn *g_dbus_error_get_remote_error;
    ak_g_dbus_error_is_remote_error_fn *g_dbus_error_is_remote_error;
    ak_g_dbus_error_strip_remote_error_fn *g_dbus_error_strip_remote_error;
    ak_g_dbus_proxy_get_name_owner_fn *g_dbus_proxy_get_name_owner;
    ak_g_error_free_fn *g_error_free;
    ak_g_free_fn *g_free;
    ak_g_hash_table_insert_fn *g_hash_table_insert;
    ak_g_hash_table_iter_init_fn *g_hash_table_iter_init;
    ak_g_hash_table_iter_next_fn *g_hash_table_iter_next;
    ak_g_hash_table_new_fn *g_hash_table_new;
    ak_g_hash_table_new_full_fn *g_hash_table_new_full;
    ak_g_hash_table_unref_fn *g_hash_table_unref;
    ak_g_io_error_quark_fn *g_io_error_quark;
    ak_g_main_context_iteration_fn *g_main_context_iteration;
    ak_g_main_context_new_fn *g_main_context_new;
    ak_g_main_context_push_thread_default_fn *g_main_context_push_thread_default;
    ak_g_object_ref_fn *g_object_ref;
    ak_g_object_unref_fn *g_object_unref;
    ak_g_source_attach_fn *g_source_attach;
    ak_g_source_destroy_fn *g_source_destroy;
    ak_g_source_set_callback_fn *g_source_set_callback;
    ak_g_source_unref_fn *g_source_unref;
    ak_g_str_equal_fn *g_str_equal;
    ak_g_str_hash_fn *g_str_hash;
    ak_g_strdup_fn *g_strdup;
    ak_g_strfreev_fn *g_strfreev;
    ak_g_timeout_source_new_fn *g_timeout_source_new;
    ak_g_variant_get_boolean_fn *g_variant_get_boolean;
    ak_g_variant_get_child_value_fn *g_variant_get_child_value;
    ak_g_variant_get_string_fn *g_variant_get_string;
    ak_g_variant_get_type_string_fn *g_variant_get_type_string;
    ak_g_variant_get_uint32_fn *g_variant_get_uint32;
    ak_g_variant_get_uint64_fn *g_variant_get_uint64;
    ak_g_variant_get_variant_fn *g_variant_get_variant;
    ak_g_variant_lookup_value_fn *g_variant_lookup_value;
    ak_g_variant_n_children_fn *g_variant_n_children;
    ak_g_variant_new_array_fn *g_variant_new_array;
    ak_g_variant_new_dict_entry_fn *g_variant_new_dict_entry;
    ak_g_variant_new_string_fn *g_variant_new_string;
    ak_g_variant_new_tuple_fn *g_variant_new_tuple;
    ak_g_variant_new_uint32_fn *g_variant_new_uint32;
    ak_g_variant_ref_sink_fn *g_variant_ref_sink;
    ak_g_variant_unref_fn *g_variant_unref;
    ak_secret_schema_newv_fn *secret_schema_newv;
    ak_secret_service_create_collection_dbus_path_fn *secret_service_create_collection_dbus_path;
    ak_secret_service_create_collection_dbus_path_finish_fn *secret_service_create_collection_dbus_path_finish;
    ak_secret_service_create_item_dbus_path_fn *secret_service_create_item_dbus_path;
    ak_secret_service_create_item_dbus_path_finish_fn *secret_service_create_item_dbus_path_finish;
    ak_secret_service_delete_item_dbus_path_fn *secret_service_delete_item_dbus_path;
    ak_secret_service_delete_item_dbus_path_finish_fn *secret_service_delete_item_dbus_path_finish;
    ak_secret_service_encode_dbus_secret_fn *secret_service_encode_dbus_secret;
    ak_secret_service_ensure_session_fn *secret_service_ensure_session;
    ak_secret_service_ensure_session_finish_fn *secret_service_ensure_session_finish;
    ak_secret_service_get_fn *secret_service_get;
    ak_secret_service_get_finish_fn *secret_service_get_finish;
    ak_secret_service_get_secrets_for_dbus_paths_fn *secret_service_get_secrets_for_dbus_paths;
    ak_secret_service_get_secrets_for_dbus_paths_finish_fn *secret_service_get_secrets_for_dbus_paths_finish;
    ak_secret_service_read_alias_dbus_path_fn *secret_service_read_alias_dbus_path;
    ak_secret_service_read_alias_dbus_path_finish_fn *secret_service_read_alias_dbus_path_finish;
    ak_secret_service_search_for_dbus_paths_fn *secret_service_search_for_dbus_paths;
    ak_secret_service_search_for_dbus_paths_finish_fn *secret_service_search_for_dbus_paths_finish;
    ak_secret_service_unlock_dbus_paths_fn *secret_service_unlock_dbus_paths;
    ak_secret_service_unlock_dbus_paths_finish_fn *secret_service_unlock_dbus_paths_finish;
    ak_secret_value_get_fn *secret_value_get;
    ak_secret_value_new_fn *secret_value_new;
    ak_secret_value_unref_fn *secret_value_unref;
};
extern struct ak_libsecret_functions ak_libsecret;

/* Opens libsecret-1.so.0 once (thread-safe) and finds every function. 0 when it is ready;
 * else -1 with the reason in `message`. Call it before any function below. */
int ak_libsecret_load(char *message, size_t length);

#ifndef AK_LIBSECRET_SYSTEM_TYPES
static inline void g_bus_get(GBusType bus_type, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.g_bus_get(bus_type, cancellable, callback, user_data); }
static inline GDBusConnection * g_bus_get_finish(GAsyncResult *res, GError **error) { return ak_libsecret.g_bus_get_finish(res, error); }
static inline void g_cancellable_cancel(GCancellable *cancellable) { ak_libsecret.g_cancellable_cancel(cancellable); }
static inline GCancellable * g_cancellable_new(void) { return ak_libsecret.g_cancellable_new(); }
static inline void g_dbus_connection_call(GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.g_dbus_connection_call(connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, callback, user_data); }
static inline GVariant * g_dbus_connection_call_finish(GDBusConnection *connection, GAsyncResult *res, GError **error) { return ak_libsecret.g_dbus_connection_call_finish(connection, res, error); }
static inline gchar * g_dbus_error_get_remote_error(const GError *error) { return ak_libsecret.g_dbus_error_get_remote_error(error); }
static inline gboolean g_dbus_error_is_remote_error(const GError *error) { return ak_libsecret.g_dbus_error_is_remote_error(error); }
static inline gboolean g_dbus_error_strip_remote_error(GError *error) { return ak_libsecret.g_dbus_error_strip_remote_error(error); }
static inline gchar * g_dbus_proxy_get_name_owner(GDBusProxy *proxy) { return ak_libsecret.g_dbus_proxy_get_name_owner(proxy); }
static inline void g_error_free(GError *error) { ak_libsecret.g_error_free(error); }
static inline void g_free(gpointer mem) { ak_libsecret.g_free(mem); }
static inline gboolean g_hash_table_insert(GHashTable *hash_table, gpointer key, gpointer value) { return ak_libsecret.g_hash_table_insert(hash_table, key, value); }
static inline void g_hash_table_iter_init(GHashTableIter *iter, GHashTable *hash_table) { ak_libsecret.g_hash_table_iter_init(iter, hash_table); }
static inline gboolean g_hash_table_iter_next(GHashTableIter *iter, gpointer *key, gpointer *value) { return ak_libsecret.g_hash_table_iter_next(iter, key, value); }
static inline GHashTable* g_hash_table_new(GHashFunc hash_func, GEqualFunc key_equal_func) { return ak_libsecret.g_hash_table_new(hash_func, key_equal_func); }
static inline GHashTable* g_hash_table_new_full(GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func) { return ak_libsecret.g_hash_table_new_full(hash_func, key_equal_func, key_destroy_func, value_destroy_func); }
static inline void g_hash_table_unref(GHashTable *hash_table) { ak_libsecret.g_hash_table_unref(hash_table); }
static inline GQuark g_io_error_quark(void) { return ak_libsecret.g_io_error_quark(); }
static inline gboolean g_main_context_iteration(GMainContext *context, gboolean may_block) { return ak_libsecret.g_main_context_iteration(context, may_block); }
static inline GMainContext * g_main_context_new(void) { return ak_libsecret.g_main_context_new(); }
static inline void g_main_context_push_thread_default(GMainContext *context) { ak_libsecret.g_main_context_push_thread_default(context); }
static inline gpointer g_object_ref(gpointer object) { return ak_libsecret.g_object_ref(object); }
static inline void g_object_unref(gpointer object) { ak_libsecret.g_object_unref(object); }
static inline guint g_source_attach(GSource *source, GMainContext *context) { return ak_libsecret.g_source_attach(source, context); }
static inline void g_source_destroy(GSource *source) { ak_libsecret.g_source_destroy(source); }
static inline void g_source_set_callback(GSource *source, GSourceFunc func, gpointer data, GDestroyNotify notify) { ak_libsecret.g_source_set_callback(source, func, data, notify); }
static inline void g_source_unref(GSource *source) { ak_libsecret.g_source_unref(source); }
static inline gboolean g_str_equal(gconstpointer v1, gconstpointer v2) { return ak_libsecret.g_str_equal(v1, v2); }
static inline guint g_str_hash(gconstpointer v) { return ak_libsecret.g_str_hash(v); }
static inline gchar* g_strdup(const gchar *str) { return ak_libsecret.g_strdup(str); }
static inline void g_strfreev(gchar **str_array) { ak_libsecret.g_strfreev(str_array); }
static inline GSource * g_timeout_source_new(guint interval) { return ak_libsecret.g_timeout_source_new(interval); }
static inline gboolean g_variant_get_boolean(GVariant *value) { return ak_libsecret.g_variant_get_boolean(value); }
static inline GVariant * g_variant_get_child_value(GVariant *value, gsize index_) { return ak_libsecret.g_variant_get_child_value(value, index_); }
static inline const gchar * g_variant_get_string(GVariant *value, gsize *length) { return ak_libsecret.g_variant_get_string(value, length); }
static inline const gchar * g_variant_get_type_string(GVariant *value) { return ak_libsecret.g_variant_get_type_string(value); }
static inline guint32 g_variant_get_uint32(GVariant *value) { return ak_libsecret.g_variant_get_uint32(value); }
static inline guint64 g_variant_get_uint64(GVariant *value) { return ak_libsecret.g_variant_get_uint64(value); }
static inline GVariant * g_variant_get_variant(GVariant *value) { return ak_libsecret.g_variant_get_variant(value); }
static inline GVariant * g_variant_lookup_value(GVariant *dictionary, const gchar *key, const GVariantType *expected_type) { return ak_libsecret.g_variant_lookup_value(dictionary, key, expected_type); }
static inline gsize g_variant_n_children(GVariant *value) { return ak_libsecret.g_variant_n_children(value); }
static inline GVariant * g_variant_new_array(const GVariantType *child_type, GVariant * const *children, gsize n_children) { return ak_libsecret.g_variant_new_array(child_type, children, n_children); }
static inline GVariant * g_variant_new_dict_entry(GVariant *key, GVariant *value) { return ak_libsecret.g_variant_new_dict_entry(key, value); }
static inline GVariant * g_variant_new_string(const gchar *string) { return ak_libsecret.g_variant_new_string(string); }
static inline GVariant * g_variant_new_tuple(GVariant * const *children, gsize n_children) { return ak_libsecret.g_variant_new_tuple(children, n_children); }
static inline GVariant * g_variant_new_uint32(guint32 value) { return ak_libsecret.g_variant_new_uint32(value); }
static inline GVariant * g_variant_ref_sink(GVariant *value) { return ak_libsecret.g_variant_ref_sink(value); }
static inline void g_variant_unref(GVariant *value) { ak_libsecret.g_variant_unref(value); }
static inline SecretSchema * secret_schema_newv(const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types) { return ak_libsecret.secret_schema_newv(name, flags, attribute_names_and_types); }
static inline void secret_service_create_collection_dbus_path(SecretService *self, GHashTable *properties, const gchar *alias, SecretCollectionCreateFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_create_collection_dbus_path(self, properties, alias, flags, cancellable, callback, user_data); }
static inline gchar * secret_service_create_collection_dbus_path_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_create_collection_dbus_path_finish(self, result, error); }
static inline void secret_service_create_item_dbus_path(SecretService *self, const gchar *collection_path, GHashTable *properties, SecretValue *value, SecretItemCreateFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_create_item_dbus_path(self, collection_path, properties, value, flags, cancellable, callback, user_data); }
static inline gchar * secret_service_create_item_dbus_path_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_create_item_dbus_path_finish(self, result, error); }
static inline void secret_service_delete_item_dbus_path(SecretService *self, const gchar *item_path, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_delete_item_dbus_path(self, item_path, cancellable, callback, user_data); }
static inline gboolean secret_service_delete_item_dbus_path_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_delete_item_dbus_path_finish(self, result, error); }
static inline GVariant * secret_service_encode_dbus_secret(SecretService *service, SecretValue *value) { return ak_libsecret.secret_service_encode_dbus_secret(service, value); }
static inline void secret_service_ensure_session(SecretService *self, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_ensure_session(self, cancellable, callback, user_data); }
static inline gboolean secret_service_ensure_session_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_ensure_session_finish(self, result, error); }
static inline void secret_service_get(SecretServiceFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_get(flags, cancellable, callback, user_data); }
static inline SecretService * secret_service_get_finish(GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_get_finish(result, error); }
static inline void secret_service_get_secrets_for_dbus_paths(SecretService *self, const gchar **item_paths, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_get_secrets_for_dbus_paths(self, item_paths, cancellable, callback, user_data); }
static inline GHashTable * secret_service_get_secrets_for_dbus_paths_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_get_secrets_for_dbus_paths_finish(self, result, error); }
static inline void secret_service_read_alias_dbus_path(SecretService *self, const gchar *alias, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_read_alias_dbus_path(self, alias, cancellable, callback, user_data); }
static inline gchar * secret_service_read_alias_dbus_path_finish(SecretService *self, GAsyncResult *result, GError **error) { return ak_libsecret.secret_service_read_alias_dbus_path_finish(self, result, error); }
static inline void secret_service_search_for_dbus_paths(SecretService *self, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_search_for_dbus_paths(self, schema, attributes, cancellable, callback, user_data); }
static inline gboolean secret_service_search_for_dbus_paths_finish(SecretService *self, GAsyncResult *result, gchar ***unlocked, gchar ***locked, GError **error) { return ak_libsecret.secret_service_search_for_dbus_paths_finish(self, result, unlocked, locked, error); }
static inline void secret_service_unlock_dbus_paths(SecretService *self, const gchar **paths, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data) { ak_libsecret.secret_service_unlock_dbus_paths(self, paths, cancellable, callback, user_data); }
static inline gint secret_service_unlock_dbus_paths_finish(SecretService *self, GAsyncResult *result, gchar ***unlocked, GError **error) { return ak_libsecret.secret_service_unlock_dbus_paths_finish(self, result, unlocked, error); }
static inline const gchar * secret_value_get(SecretValue *value, gsize *length) { return ak_libsecret.secret_value_get(value, length); }
static inline SecretValue * secret_value_new(const gchar *secret, gssize length, const gchar *content_type) { return ak_libsecret.secret_value_new(secret, length, content_type); }
static inline void secret_value_unref(gpointer value) { ak_libsecret.secret_value_unref(value); }
#endif

#endif
