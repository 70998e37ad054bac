#ifndef AUTHKIT_CRYPTO_LOADER_H
#define AUTHKIT_CRYPTO_LOADER_H
#include <stddef.h>

/* Opens libcrypto.so.3 once (thread-safe). Returns 0 when it is available; otherwise fills
 * `message` (if given) with what is missing and returns -1. The OpenSSL functions authkit
 * calls are defined by this target and forward to the library (crypto_loader.c). */
int ak_crypto_load(char *message, size_t message_length);

#endif
