#ifndef AUTHKIT_LIBC_SHIM_H
#define AUTHKIT_LIBC_SHIM_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/// errno, which C declares as a macro Swift cannot import.
static inline int ak_errno(void) { return errno; }

/// open(2) and openat(2) without a mode: Swift cannot call the variadic originals.
static inline int ak_open(const char *path, int flags) { return open(path, flags); }
static inline int ak_openat(int folder, const char *path, int flags) { return openat(folder, path, flags); }

/// O_NONBLOCK set on `fd` (fcntl(2) is variadic, which Swift cannot call).
static inline int ak_set_nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

#ifndef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031 /* Linux's, which glibc declares only under _GNU_SOURCE */
#endif

/// A pipe's capacity raised to at least `size` bytes (fcntl(2), F_SETPIPE_SZ).
static inline int ak_set_pipe_size(int fd, int size) { return fcntl(fd, F_SETPIPE_SZ, size); }

/// memfd_create(2) (glibc declares it only under _GNU_SOURCE).
static inline int ak_memfd_create(const char *name) { return (int)syscall(SYS_memfd_create, name, 0); }

/// FD_CLOEXEC set on `fd` (fcntl(2) is variadic, which Swift cannot call).
static inline int ak_set_cloexec(int fd) {
    int flags = fcntl(fd, F_GETFD);
    return flags < 0 ? -1 : fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

/// `signal` back to its default disposition (SIG_DFL is a macro over a cast Swift cannot import).
static inline void ak_default_signal(int signal) { struct sigaction action = {0}; action.sa_handler = SIG_DFL; sigaction(signal, &action, 0); }

/// The signals glibc keeps for itself (32 up to SIGRTMIN), which its sigaction refuses, back to
/// their default disposition where a parent left them ignored (through the system call; a
/// handler glibc installed is left alone, and `exec` resets it). As CChildProcess does.
static inline void ak_unignore_reserved_signals(void) {
    for (int signal = 32; signal < SIGRTMIN; signal++) {
        unsigned long old[4] = {0, 0, 0, 0};
        if (syscall(SYS_rt_sigaction, signal, 0, old, 8) == 0 && old[0] == (unsigned long)SIG_IGN) {
            unsigned long action[4] = {0, 0, 0, 0};
            syscall(SYS_rt_sigaction, signal, action, 0, 8);
        }
    }
}

/// The highest real-time signal (SIGRTMAX is a macro over a function call).
static inline int ak_sigrtmax(void) { return SIGRTMAX; }

#endif
