#ifndef AUTHKIT_CLIBSECRET_SHIM_H
#define AUTHKIT_CLIBSECRET_SHIM_H
// The object-path calls (secret-paths.h: search/unlock/delete by path, read alias) are marked
// "subject to change" but have not changed since libsecret 0.7; SecretStore uses them to
// avoid one D-Bus round trip per item. Acknowledge, as libsecret asks.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#endif
