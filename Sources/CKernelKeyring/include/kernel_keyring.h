#ifndef AUTHKIT_KERNEL_KEYRING_H
#define AUTHKIT_KERNEL_KEYRING_H
#include <stddef.h>
#include <stdint.h>

/* The kernel's key management system calls (keyctl(2), add_key(2)), without libkeyutils:
 * glibc has no wrappers and syscall(2) is variadic, which Swift cannot call. Each returns
 * what the system call returns, -1 with errno set on failure. */

/* KEYCTL_GET_PERSISTENT: the user's persistent keyring, linked into `destination`. */
long ak_keyctl_get_persistent(uint32_t uid, int32_t destination);
/* KEYCTL_SEARCH: a key of `type` and `description` reachable from `keyring`. */
long ak_keyctl_search(int32_t keyring, const char *type, const char *description);
/* KEYCTL_READ: the payload (or, for a keyring, the linked key ids) into `buffer`; returns the
 * full size, which may exceed `length`. */
long ak_keyctl_read(int32_t key, void *buffer, size_t length);
/* KEYCTL_DESCRIBE: "type;uid;gid;perm;description". */
long ak_keyctl_describe(int32_t key, char *buffer, size_t length);
/* KEYCTL_SETPERM. */
long ak_keyctl_setperm(int32_t key, uint32_t permissions);
/* KEYCTL_UNLINK `key` from `keyring`. */
long ak_keyctl_unlink(int32_t key, int32_t keyring);
/* KEYCTL_INVALIDATE: gone at once for everyone. */
long ak_keyctl_invalidate(int32_t key);
/* KEYCTL_SET_TIMEOUT: the key expires `seconds` from now (0: never). */
long ak_keyctl_set_timeout(int32_t key, uint32_t seconds);
/* add_key(2): creates, or for a `user` key with the same description in `keyring`, updates the
 * payload atomically (a failed update leaves the old payload). */
long ak_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring);

#endif
