/* Written by scripts/generate-doors: edit the script, not this file. */
#include "libsecret_door.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct ak_libsecret_functions ak_libsecret;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int ready;
static char failure[256];

static void load(void) {
    /* As if linked: symbols bound when first called (RTLD_LAZY; binding all of GIO at once
     * costs milliseconds), and global, so GIO's own modules find GLib where they expect it. */
    void *library = dlopen("libsecret-1.so.0", RTLD_LAZY | RTLD_GLOBAL);
    if (library == NULL) {
        snprintf(failure, sizeof failure, "libsecret cannot be loaded (Debian: apt-get install libsecret-1-0): %s", dlerror());
        return;
    }
    if ((ak_libsecret.g_bus_get = (ak_g_bus_get_fn *)dlsym(library, "g_bus_get")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_bus_get");
        return;
    }
    if ((ak_libsecret.g_bus_get_finish = (ak_g_bus_get_finish_fn *)dlsym(library, "g_bus_get_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_bus_get_finish");
        return;
    }
    if ((ak_libsecret.g_cancellable_cancel = (ak_g_cancellable_cancel_fn *)dlsym(library, "g_cancellable_cancel")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_cancellable_cancel");
        return;
    }
    if ((ak_libsecret.g_cancellable_new = (ak_g_cancellable_new_fn *)dlsym(library, "g_cancellable_new")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_cancellable_new");
        return;
    }
    if ((ak_libsecret.g_dbus_connection_call = (ak_g_dbus_connection_call_fn *)dlsym(library, "g_dbus_connection_call")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_connection_call");
        return;
    }
    if ((ak_libsecret.g_dbus_connection_call_finish = (ak_g_dbus_connection_call_finish_fn *)dlsym(library, "g_dbus_connection_call_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_connection_call_finish");
        return;
    }
    if ((ak_libsecret.g_dbus_error_get_remote_error = (ak_g_dbus_error_get_remote_error_fn *)dlsym(library, "g_dbus_error_get_remote_error")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_error_get_remote_error");
        return;
    }
    if ((ak_libsecret.g_dbus_error_is_remote_error = (ak_g_dbus_error_is_remote_error_fn *)dlsym(library, "g_dbus_error_is_remote_error")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_error_is_remote_error");
        return;
    }
    if ((ak_libsecret.g_dbus_error_strip_remote_error = (ak_g_dbus_error_strip_remote_error_fn *)dlsym(library, "g_dbus_error_strip_remote_error")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_error_strip_remote_error");
        return;
    }
    if ((ak_libsecret.g_dbus_proxy_get_name_owner = (ak_g_dbus_proxy_get_name_owner_fn *)dlsym(library, "g_dbus_proxy_get_name_owner")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_dbus_proxy_get_name_owner");
        return;
    }
    if ((ak_libsecret.g_error_free = (ak_g_error_free_fn *)dlsym(library, "g_error_free")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_error_free");
        return;
    }
    if ((ak_libsecret.g_free = (ak_g_free_fn *)dlsym(library, "g_free")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_free");
        return;
    }
    if ((ak_libsecret.g_hash_table_insert = (ak_g_hash_table_insert_fn *)dlsym(library, "g_hash_table_insert")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_insert");
        return;
    }
    if ((ak_libsecret.g_hash_table_iter_init = (ak_g_hash_table_iter_init_fn *)dlsym(library, "g_hash_table_iter_init")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_iter_init");
        return;
    }
    if ((ak_libsecret.g_hash_table_iter_next = (ak_g_hash_table_iter_next_fn *)dlsym(library, "g_hash_table_iter_next")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_iter_next");
        return;
    }
    if ((ak_libsecret.g_hash_table_new = (ak_g_hash_table_new_fn *)dlsym(library, "g_hash_table_new")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_new");
        return;
    }
    if ((ak_libsecret.g_hash_table_new_full = (ak_g_hash_table_new_full_fn *)dlsym(library, "g_hash_table_new_full")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_new_full");
        return;
    }
    if ((ak_libsecret.g_hash_table_unref = (ak_g_hash_table_unref_fn *)dlsym(library, "g_hash_table_unref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_hash_table_unref");
        return;
    }
    if ((ak_libsecret.g_io_error_quark = (ak_g_io_error_quark_fn *)dlsym(library, "g_io_error_quark")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_io_error_quark");
        return;
    }
    if ((ak_libsecret.g_main_context_iteration = (ak_g_main_context_iteration_fn *)dlsym(library, "g_main_context_iteration")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_main_context_iteration");
        return;
    }
    if ((ak_libsecret.g_main_context_new = (ak_g_main_context_new_fn *)dlsym(library, "g_main_context_new")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_main_context_new");
        return;
    }
    if ((ak_libsecret.g_main_context_push_thread_default = (ak_g_main_context_push_thread_default_fn *)dlsym(library, "g_main_context_push_thread_default")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_main_context_push_thread_default");
        return;
    }
    if ((ak_libsecret.g_object_ref = (ak_g_object_ref_fn *)dlsym(library, "g_object_ref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_object_ref");
        return;
    }
    if ((ak_libsecret.g_object_unref = (ak_g_object_unref_fn *)dlsym(library, "g_object_unref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_object_unref");
        return;
    }
    if ((ak_libsecret.g_source_attach = (ak_g_source_attach_fn *)dlsym(library, "g_source_attach")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_source_attach");
        return;
    }
    if ((ak_libsecret.g_source_destroy = (ak_g_source_destroy_fn *)dlsym(library, "g_source_destroy")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_source_destroy");
        return;
    }
    if ((ak_libsecret.g_source_set_callback = (ak_g_source_set_callback_fn *)dlsym(library, "g_source_set_callback")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_source_set_callback");
        return;
    }
    if ((ak_libsecret.g_source_unref = (ak_g_source_unref_fn *)dlsym(library, "g_source_unref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_source_unref");
        return;
    }
    if ((ak_libsecret.g_str_equal = (ak_g_str_equal_fn *)dlsym(library, "g_str_equal")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_str_equal");
        return;
    }
    if ((ak_libsecret.g_str_hash = (ak_g_str_hash_fn *)dlsym(library, "g_str_hash")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_str_hash");
        return;
    }
    if ((ak_libsecret.g_strdup = (ak_g_strdup_fn *)dlsym(library, "g_strdup")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_strdup");
        return;
    }
    if ((ak_libsecret.g_strfreev = (ak_g_strfreev_fn *)dlsym(library, "g_strfreev")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_strfreev");
        return;
    }
    if ((ak_libsecret.g_timeout_source_new = (ak_g_timeout_source_new_fn *)dlsym(library, "g_timeout_source_new")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_timeout_source_new");
        return;
    }
    if ((ak_libsecret.g_variant_get_boolean = (ak_g_variant_get_boolean_fn *)dlsym(library, "g_variant_get_boolean")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_boolean");
        return;
    }
    if ((ak_libsecret.g_variant_get_child_value = (ak_g_variant_get_child_value_fn *)dlsym(library, "g_variant_get_child_value")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_child_value");
        return;
    }
    if ((ak_libsecret.g_variant_get_string = (ak_g_variant_get_string_fn *)dlsym(library, "g_variant_get_string")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_string");
        return;
    }
    if ((ak_libsecret.g_variant_get_type_string = (ak_g_variant_get_type_string_fn *)dlsym(library, "g_variant_get_type_string")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_type_string");
        return;
    }
    if ((ak_libsecret.g_variant_get_uint32 = (ak_g_variant_get_uint32_fn *)dlsym(library, "g_variant_get_uint32")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_uint32");
        return;
    }
    if ((ak_libsecret.g_variant_get_uint64 = (ak_g_variant_get_uint64_fn *)dlsym(library, "g_variant_get_uint64")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_uint64");
        return;
    }
    if ((ak_libsecret.g_variant_get_variant = (ak_g_variant_get_variant_fn *)dlsym(library, "g_variant_get_variant")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_get_variant");
        return;
    }
    if ((ak_libsecret.g_variant_lookup_value = (ak_g_variant_lookup_value_fn *)dlsym(library, "g_variant_lookup_value")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_lookup_value");
        return;
    }
    if ((ak_libsecret.g_variant_n_children = (ak_g_variant_n_children_fn *)dlsym(library, "g_variant_n_children")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_n_children");
        return;
    }
    if ((ak_libsecret.g_variant_new_array = (ak_g_variant_new_array_fn *)dlsym(library, "g_variant_new_array")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_new_array");
        return;
    }
    if ((ak_libsecret.g_variant_new_dict_entry = (ak_g_variant_new_dict_entry_fn *)dlsym(library, "g_variant_new_dict_entry")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_new_dict_entry");
        return;
    }
    if ((ak_libsecret.g_variant_new_string = (ak_g_variant_new_string_fn *)dlsym(library, "g_variant_new_string")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_new_string");
        return;
    }
    if ((ak_libsecret.g_variant_new_tuple = (ak_g_variant_new_tuple_fn *)dlsym(library, "g_variant_new_tuple")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_new_tuple");
        return;
    }
    if ((ak_libsecret.g_variant_new_uint32 = (ak_g_variant_new_uint32_fn *)dlsym(library, "g_variant_new_uint32")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_new_uint32");
        return;
    }
    if ((ak_libsecret.g_variant_ref_sink = (ak_g_variant_ref_sink_fn *)dlsym(library, "g_variant_ref_sink")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_ref_sink");
        return;
    }
    if ((ak_libsecret.g_variant_unref = (ak_g_variant_unref_fn *)dlsym(library, "g_variant_unref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no g_variant_unref");
        return;
    }
    if ((ak_libsecret.secret_schema_newv = (ak_secret_schema_newv_fn *)dlsym(library, "secret_schema_newv")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_schema_newv");
        return;
    }
    if ((ak_libsecret.secret_service_create_collection_dbus_path = (ak_secret_service_create_collection_dbus_path_fn *)dlsym(library, "secret_service_create_collection_dbus_path")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_create_collection_dbus_path");
        return;
    }
    if ((ak_libsecret.secret_service_create_collection_dbus_path_finish = (ak_secret_service_create_collection_dbus_path_finish_fn *)dlsym(library, "secret_service_create_collection_dbus_path_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_create_collection_dbus_path_finish");
        return;
    }
    if ((ak_libsecret.secret_service_create_item_dbus_path = (ak_secret_service_create_item_dbus_path_fn *)dlsym(library, "secret_service_create_item_dbus_path")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_create_item_dbus_path");
        return;
    }
    if ((ak_libsecret.secret_service_create_item_dbus_path_finish = (ak_secret_service_create_item_dbus_path_finish_fn *)dlsym(library, "secret_service_create_item_dbus_path_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_create_item_dbus_path_finish");
        return;
    }
    if ((ak_libsecret.secret_service_delete_item_dbus_path = (ak_secret_service_delete_item_dbus_path_fn *)dlsym(library, "secret_service_delete_item_dbus_path")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_delete_item_dbus_path");
        return;
    }
    if ((ak_libsecret.secret_service_delete_item_dbus_path_finish = (ak_secret_service_delete_item_dbus_path_finish_fn *)dlsym(library, "secret_service_delete_item_dbus_path_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_delete_item_dbus_path_finish");
        return;
    }
    if ((ak_libsecret.secret_service_encode_dbus_secret = (ak_secret_service_encode_dbus_secret_fn *)dlsym(library, "secret_service_encode_dbus_secret")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_encode_dbus_secret");
        return;
    }
    if ((ak_libsecret.secret_service_ensure_session = (ak_secret_service_ensure_session_fn *)dlsym(library, "secret_service_ensure_session")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_ensure_session");
        return;
    }
    if ((ak_libsecret.secret_service_ensure_session_finish = (ak_secret_service_ensure_session_finish_fn *)dlsym(library, "secret_service_ensure_session_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_ensure_session_finish");
        return;
    }
    if ((ak_libsecret.secret_service_get = (ak_secret_service_get_fn *)dlsym(library, "secret_service_get")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_get");
        return;
    }
    if ((ak_libsecret.secret_service_get_finish = (ak_secret_service_get_finish_fn *)dlsym(library, "secret_service_get_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_get_finish");
        return;
    }
    if ((ak_libsecret.secret_service_get_secrets_for_dbus_paths = (ak_secret_service_get_secrets_for_dbus_paths_fn *)dlsym(library, "secret_service_get_secrets_for_dbus_paths")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_get_secrets_for_dbus_paths");
        return;
    }
    if ((ak_libsecret.secret_service_get_secrets_for_dbus_paths_finish = (ak_secret_service_get_secrets_for_dbus_paths_finish_fn *)dlsym(library, "secret_service_get_secrets_for_dbus_paths_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_get_secrets_for_dbus_paths_finish");
        return;
    }
    if ((ak_libsecret.secret_service_read_alias_dbus_path = (ak_secret_service_read_alias_dbus_path_fn *)dlsym(library, "secret_service_read_alias_dbus_path")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_read_alias_dbus_path");
        return;
    }
    if ((ak_libsecret.secret_service_read_alias_dbus_path_finish = (ak_secret_service_read_alias_dbus_path_finish_fn *)dlsym(library, "secret_service_read_alias_dbus_path_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_read_alias_dbus_path_finish");
        return;
    }
    if ((ak_libsecret.secret_service_search_for_dbus_paths = (ak_secret_service_search_for_dbus_paths_fn *)dlsym(library, "secret_service_search_for_dbus_paths")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_search_for_dbus_paths");
        return;
    }
    if ((ak_libsecret.secret_service_search_for_dbus_paths_finish = (ak_secret_service_search_for_dbus_paths_finish_fn *)dlsym(library, "secret_service_search_for_dbus_paths_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_search_for_dbus_paths_finish");
        return;
    }
    if ((ak_libsecret.secret_service_unlock_dbus_paths = (ak_secret_service_unlock_dbus_paths_fn *)dlsym(library, "secret_service_unlock_dbus_paths")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_unlock_dbus_paths");
        return;
    }
    if ((ak_libsecret.secret_service_unlock_dbus_paths_finish = (ak_secret_service_unlock_dbus_paths_finish_fn *)dlsym(library, "secret_service_unlock_dbus_paths_finish")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_service_unlock_dbus_paths_finish");
        return;
    }
    if ((ak_libsecret.secret_value_get = (ak_secret_value_get_fn *)dlsym(library, "secret_value_get")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_value_get");
        return;
    }
    if ((ak_libsecret.secret_value_new = (ak_secret_value_new_fn *)dlsym(library, "secret_value_new")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_value_new");
        return;
    }
    if ((ak_libsecret.secret_value_unref = (ak_secret_value_unref_fn *)dlsym(library, "secret_value_unref")) == NULL) {
        snprintf(failure, sizeof failure, "libsecret-1.so.0 has no secret_value_unref");
        return;
    }
    ready = 1;
}

int ak_libsecret_load(char *message, size_t length) {
    pthread_once(&once, load);
    if (ready) return 0;
    if (message != NULL && length > 0) snprintf(message, length, "%s", failure);
    return -1;
}
