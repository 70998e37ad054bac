#ifndef AUTHKIT_COPENSSL_SHIM_H
#define AUTHKIT_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/rsa.h>
#include <openssl/obj_mac.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <openssl/provider.h>
#include <openssl/encoder.h>
#include <openssl/decoder.h>

/* EVP_PKEY_PUBLIC_KEY is an expression macro, which Swift does not import. */
static inline int authkit_evp_pkey_public_key_selection(void) {
    return EVP_PKEY_PUBLIC_KEY;
}

/* EVP_PKEY_KEYPAIR likewise. */
static inline int authkit_evp_pkey_keypair_selection(void) {
    return EVP_PKEY_KEYPAIR;
}
#endif
