// OpenSSL 3 for the JOSE benchmark's reference loop (Debian: libssl-dev), linked plainly:
// a benchmark is no library, so it needs none of CCryptoLoader's care.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
