#include "kernel_keyring.h"
#include <sys/syscall.h>
#include <unistd.h>

#define AK_KEYCTL_DESCRIBE 6
#define AK_KEYCTL_UNLINK 9
#define AK_KEYCTL_SEARCH 10
#define AK_KEYCTL_SET_TIMEOUT 15
#define AK_KEYCTL_READ 11
#define AK_KEYCTL_SETPERM 5
#define AK_KEYCTL_INVALIDATE 21
#define AK_KEYCTL_GET_PERSISTENT 22

long ak_keyctl_get_persistent(uint32_t uid, int32_t destination) {
    return syscall(SYS_keyctl, AK_KEYCTL_GET_PERSISTENT, (unsigned long)uid, (long)destination, 0L, 0L);
}

long ak_keyctl_search(int32_t keyring, const char *type, const char *description) {
    return syscall(SYS_keyctl, AK_KEYCTL_SEARCH, (long)keyring, type, description, 0L);
}

long ak_keyctl_read(int32_t key, void *buffer, size_t length) {
    return syscall(SYS_keyctl, AK_KEYCTL_READ, (long)key, buffer, length, 0L);
}

long ak_keyctl_describe(int32_t key, char *buffer, size_t length) {
    return syscall(SYS_keyctl, AK_KEYCTL_DESCRIBE, (long)key, buffer, length, 0L);
}

long ak_keyctl_setperm(int32_t key, uint32_t permissions) {
    return syscall(SYS_keyctl, AK_KEYCTL_SETPERM, (long)key, (unsigned long)permissions, 0L, 0L);
}

long ak_keyctl_unlink(int32_t key, int32_t keyring) {
    return syscall(SYS_keyctl, AK_KEYCTL_UNLINK, (long)key, (long)keyring, 0L, 0L);
}

long ak_keyctl_invalidate(int32_t key) {
    return syscall(SYS_keyctl, AK_KEYCTL_INVALIDATE, (long)key, 0L, 0L, 0L);
}

long ak_add_key(const char *type, const char *description, const void *payload, size_t length, int32_t keyring) {
    return syscall(SYS_add_key, type, description, payload, length, (long)keyring);
}

long ak_keyctl_set_timeout(int32_t key, uint32_t seconds) {
    return syscall(SYS_keyctl, AK_KEYCTL_SET_TIMEOUT, (long)key, (unsigned long)seconds, 0L, 0L);
}
