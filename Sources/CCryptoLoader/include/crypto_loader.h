#ifndef AUTHKIT_CRYPTO_LOADER_H
#define AUTHKIT_CRYPTO_LOADER_H
#include <stddef.h>

/* Opens libcrypto.so.3 once (thread-safe). Returns 0 when it is available; otherwise fills
 * `message` (if given) with what is missing and returns -1. The OpenSSL functions authkit
 * calls are defined by this target as ak_NAME and forward to the library's NAME (crypto_loader.c):
 * no OpenSSL-named symbol is defined, so programs that embed authkit can link OpenSSL too. */
int ak_crypto_load(char *message, size_t message_length);

#include "crypto_functions.h"

#endif
