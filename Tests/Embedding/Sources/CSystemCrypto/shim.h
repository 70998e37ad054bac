/* The embedding program's own, plain use of OpenSSL: nothing of authkit's. */
#include <openssl/evp.h>
#include <openssl/crypto.h>
