#define _GNU_SOURCE
#include "ccurl.h"
#include "curl_door.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_message[256];

static void copy_message(char *destination, size_t capacity, const char *source) {
    if (destination == NULL || capacity == 0) return;
    snprintf(destination, capacity, "%s", source ? source : "");
}

/* libcurl's functions come from the generated table (curl_door.c, scripts/generate-doors). */
static void load_library(void) {
    if (ak_curl_open(load_message, sizeof(load_message)) != 0) return;
    if (ak_curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_message, sizeof(load_message), "libcurl failed to initialise");
        return;
    }
    load_status = 0;
}

int ak_http_load(char *message, size_t message_length) {
    pthread_once(&load_once, load_library);
    if (load_status != 0) copy_message(message, message_length, load_message);
    return load_status;
}

const char *ak_http_curl_version(void) {
    return load_status == 0 ? ak_curl.version() : NULL;
}

/* State shared with libcurl's callbacks during one transfer. */
typedef struct transfer {
    const ak_http_request *request;
    int64_t received;
    int64_t header_bytes;
    int too_large;
    int aborted_by_body;
} transfer;

static size_t on_write(char *data, size_t size, size_t count, void *user) {
    transfer *state = user;
    size_t length = size * count;
    if (state->request->max_response_bytes >= 0 &&
        state->received + (int64_t)length > state->request->max_response_bytes) {
        state->too_large = 1;
        return 0; /* CURLE_WRITE_ERROR */
    }
    state->received += (int64_t)length;
    if (state->request->on_body != NULL &&
        state->request->on_body(state->request->context, (const uint8_t *)data, length) != 0) {
        state->aborted_by_body = 1;
        return 0;
    }
    return length;
}

/* Every header line a response may have, together: far above any real server's, and a bound
 * whatever libcurl the system has (older ones had none, CVE-2023-38039). */
#define AK_MAX_HEADER_BYTES (256 * 1024)

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    transfer *state = user;
    size_t length = size * count;
    state->header_bytes += (int64_t)length;
    if (state->header_bytes > AK_MAX_HEADER_BYTES) {
        state->too_large = 1;
        return 0;
    }
    if (state->request->on_header != NULL &&
        state->request->on_header(state->request->context, data, length) != 0) {
        return 0;
    }
    return length;
}

static int on_progress(void *user, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    transfer *state = user;
    if (state->request->should_abort != NULL && state->request->should_abort(state->request->context) != 0) {
        return 1; /* CURLE_ABORTED_BY_CALLBACK */
    }
    return 0;
}

static ak_http_failure classify(CURLcode code, const transfer *state) {
    switch (code) {
    case CURLE_OK: return AK_HTTP_OK;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT: return AK_HTTP_BAD_URL;
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_RESOLVE_HOST: return AK_HTTP_CANNOT_RESOLVE;
    case CURLE_COULDNT_CONNECT: return AK_HTTP_CANNOT_CONNECT;
    case CURLE_OPERATION_TIMEDOUT: return AK_HTTP_TIMED_OUT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED: return AK_HTTP_TLS;
    case CURLE_FILESIZE_EXCEEDED: return AK_HTTP_TOO_LARGE;
    case CURLE_WRITE_ERROR:
        if (state->too_large) return AK_HTTP_TOO_LARGE;
        return state->aborted_by_body ? AK_HTTP_ABORTED : AK_HTTP_OTHER;
    case CURLE_ABORTED_BY_CALLBACK: return AK_HTTP_ABORTED;
    case CURLE_SEND_ERROR: return AK_HTTP_SEND_FAILED;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING: return AK_HTTP_RECEIVE_FAILED;
    default: return AK_HTTP_OTHER;
    }
}

/* NO_PROXY from the environment plus the loopback names: authkit never sends a loopback
 * request (its own redirect receiver, a local test provider) through a proxy. */
static char *no_proxy_list(void) {
    const char *environment = getenv("no_proxy");
    if (environment == NULL || *environment == '\0') environment = getenv("NO_PROXY");
    if (environment != NULL && strcmp(environment, "*") == 0) return strdup("*");
    const char *loopback = "127.0.0.1,::1,localhost";
    if (environment == NULL || *environment == '\0') return strdup(loopback);
    size_t length = strlen(environment) + 1 + strlen(loopback) + 1;
    char *list = malloc(length);
    if (list != NULL) snprintf(list, length, "%s,%s", environment, loopback);
    return list;
}

int ak_http_perform(const ak_http_request *request, ak_http_result *result) {
    memset(result, 0, sizeof(*result));
    char message[256];
    if (ak_http_load(message, sizeof(message)) != 0) {
        result->failure = AK_HTTP_LIBRARY_UNAVAILABLE;
        copy_message(result->message, sizeof(result->message), message);
        return -1;
    }
    CURL *handle = ak_curl.easy_init();
    if (handle == NULL) {
        result->failure = AK_HTTP_OTHER;
        copy_message(result->message, sizeof(result->message), "libcurl could not create a handle");
        return -1;
    }

    transfer state = { .request = request };
    char error_buffer[CURL_ERROR_SIZE];
    error_buffer[0] = '\0';
    struct curl_slist *headers = NULL;
    int header_failure = 0;
    for (size_t i = 0; i < request->header_count; i++) {
        struct curl_slist *next = ak_curl.slist_append(headers, request->headers[i]);
        if (next == NULL) { header_failure = 1; break; }
        headers = next;
    }
    /* No "Expect: 100-continue" round trip for form posts. */
    if (!header_failure) {
        struct curl_slist *next = ak_curl.slist_append(headers, "Expect:");
        if (next == NULL) header_failure = 1; else headers = next;
    }
    char *no_proxy = no_proxy_list();
    if (header_failure || no_proxy == NULL) {
        ak_curl.slist_free_all(headers);
        free(no_proxy);
        ak_curl.easy_cleanup(handle);
        result->failure = AK_HTTP_OTHER;
        copy_message(result->message, sizeof(result->message), "out of memory");
        return -1;
    }

    ak_curl.easy_setopt(handle, CURLOPT_ERRORBUFFER, error_buffer);
    ak_curl.easy_setopt(handle, CURLOPT_URL, request->url);
    /* Only HTTP(S), and never follow redirects: callers decide what a 3xx means. */
    if (ak_curl.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK) {
        ak_curl.easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    }
    ak_curl.easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 0L);
    ak_curl.easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    ak_curl.easy_setopt(handle, CURLOPT_NOPROXY, no_proxy);
    /* A loopback address, whichever (NO_PROXY lists only three names), http or https: never
     * through a proxy, which would connect to its own loopback. Plain http goes only to
     * loopback (the Swift layer checks every request), so never through one either. */
    if (request->direct || strncasecmp(request->url, "http://", 7) == 0) ak_curl.easy_setopt(handle, CURLOPT_PROXY, "");
    ak_curl.easy_setopt(handle, CURLOPT_ACCEPT_ENCODING, "");
    ak_curl.easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    if (request->timeout_ms > 0) ak_curl.easy_setopt(handle, CURLOPT_TIMEOUT_MS, request->timeout_ms);
    if (request->connect_timeout_ms > 0) ak_curl.easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS, request->connect_timeout_ms);
    if (request->max_response_bytes >= 0) {
        ak_curl.easy_setopt(handle, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)request->max_response_bytes);
    }
    if (request->ca_file != NULL) ak_curl.easy_setopt(handle, CURLOPT_CAINFO, request->ca_file);
    ak_curl.easy_setopt(handle, CURLOPT_WRITEFUNCTION, on_write);
    ak_curl.easy_setopt(handle, CURLOPT_WRITEDATA, &state);
    ak_curl.easy_setopt(handle, CURLOPT_HEADERFUNCTION, on_header);
    ak_curl.easy_setopt(handle, CURLOPT_HEADERDATA, &state);
    ak_curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, on_progress);
    ak_curl.easy_setopt(handle, CURLOPT_XFERINFODATA, &state);
    ak_curl.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);

    const char *method = request->method ? request->method : "GET";
    if (strcmp(method, "GET") == 0) {
        ak_curl.easy_setopt(handle, CURLOPT_HTTPGET, 1L);
    } else if (strcmp(method, "HEAD") == 0) {
        ak_curl.easy_setopt(handle, CURLOPT_NOBODY, 1L);
    } else if (request->body == NULL && strcmp(method, "POST") != 0) {
        /* DELETE, OPTIONS …: no body, so no Content-Type of curl's choosing either */
        ak_curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
    } else {
        if (strcmp(method, "POST") != 0) ak_curl.easy_setopt(handle, CURLOPT_CUSTOMREQUEST, method);
        ak_curl.easy_setopt(handle, CURLOPT_POST, 1L);
        ak_curl.easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)request->body_length);
        ak_curl.easy_setopt(handle, CURLOPT_POSTFIELDS, request->body ? (const char *)request->body : "");
    }

    CURLcode code = ak_curl.easy_perform(handle);
    long status = 0;
    ak_curl.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    result->curl_code = (int)code;
    result->failure = classify(code, &state);
    result->status = code == CURLE_OK ? status : 0;
    if (code != CURLE_OK) {
        copy_message(result->message, sizeof(result->message), error_buffer[0] ? error_buffer : "transfer failed");
    }

    ak_curl.easy_cleanup(handle);
    ak_curl.slist_free_all(headers);
    free(no_proxy);
    return code == CURLE_OK ? 0 : -1;
}
