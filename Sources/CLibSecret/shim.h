#ifndef AUTHKIT_CLIBSECRET_SHIM_H
#define AUTHKIT_CLIBSECRET_SHIM_H
#include <libsecret/secret.h>
#endif
