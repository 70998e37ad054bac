#ifndef AUTHKIT_CCURL_H
#define AUTHKIT_CCURL_H

/*
 * A narrow, non-variadic door to libcurl for Swift.
 *
 * libcurl is opened with dlopen on the first request, never at process start-up: the
 * `authkit token` hot path must not pay for loading libcurl and its ~15 dependencies
 * (docs/decisions.md, "Why libcurl through dlopen"). Only the header is needed to build.
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Why a request ended without a response. */
typedef enum ak_http_failure {
    AK_HTTP_OK = 0,
    AK_HTTP_LIBRARY_UNAVAILABLE = 1, /* libcurl could not be loaded */
    AK_HTTP_BAD_URL = 2,
    AK_HTTP_CANNOT_RESOLVE = 3,
    AK_HTTP_CANNOT_CONNECT = 4,
    AK_HTTP_TIMED_OUT = 5,
    AK_HTTP_TLS = 6,
    AK_HTTP_TOO_LARGE = 7,
    AK_HTTP_ABORTED = 8,      /* cancelled by the caller */
    AK_HTTP_SEND_FAILED = 9,  /* the connection broke while sending */
    AK_HTTP_RECEIVE_FAILED = 10, /* the connection broke while receiving, or a malformed response */
    AK_HTTP_OTHER = 11,
} ak_http_failure;

typedef struct ak_http_request {
    const char *method;             /* "GET" or "POST" (any token is passed through) */
    const char *url;
    const char *const *headers;     /* "Name: value" lines */
    size_t header_count;
    const uint8_t *body;            /* may be NULL */
    size_t body_length;
    long timeout_ms;                /* whole transfer; 0 = none (never used by authkit) */
    long connect_timeout_ms;
    int64_t max_response_bytes;     /* body bytes; larger responses fail with AK_HTTP_TOO_LARGE */
    const char *ca_file;            /* NULL = the system's CA store */
    int direct;                     /* non-zero: never through a proxy (a loopback address) */
    void *context;
    /* One raw header line (with CRLF) of the response; return 0 to continue. */
    int (*on_header)(void *context, const char *line, size_t length);
    /* A chunk of the response body; return 0 to continue, non-zero to abort (too large). */
    int (*on_body)(void *context, const uint8_t *data, size_t length);
    /* Polled during the transfer; non-zero aborts it (task cancellation). */
    int (*should_abort)(void *context);
} ak_http_request;

typedef struct ak_http_result {
    long status;                    /* HTTP status, 0 when there is no response */
    ak_http_failure failure;
    int curl_code;                  /* libcurl's CURLcode, for diagnostics */
    char message[256];              /* libcurl's explanation; never contains bodies or headers */
} ak_http_result;

/* Loads libcurl once (thread-safe). Returns 0 on success, else fills `message`. */
int ak_http_load(char *message, size_t message_length);

/* Performs one request synchronously on the calling thread. Returns 0 when a response was
 * received (any status), non-zero otherwise with `result->failure` set. */
int ak_http_perform(const ak_http_request *request, ak_http_result *result);

/* The loaded libcurl's version string, or NULL before ak_http_load succeeded. */
const char *ak_http_curl_version(void);

#ifdef __cplusplus
}
#endif

#endif
