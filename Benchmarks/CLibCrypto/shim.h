// OpenSSL 3 for the JOSE benchmark's reference loop (Debian: libssl-dev). The root package's
// COpenSSL is not a product, so the benchmark package names libcrypto itself.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
