#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "child_process.h"

int ak_pipe_cloexec(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int ak_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

int ak_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

int ak_sigrtmax(void) { return SIGRTMAX; }

void ak_unignore_reserved_signals(void) {
    // The kernel's struct sigaction on Linux: handler, flags, restorer, an 8-byte mask.
    for (int signal = 32; signal < SIGRTMIN; signal++) {
        unsigned long old[4] = {0, 0, 0, 0};
        if (syscall(SYS_rt_sigaction, signal, 0, old, 8) == 0 && old[0] == (unsigned long)SIG_IGN) {
            unsigned long action[4] = {0, 0, 0, 0};
            syscall(SYS_rt_sigaction, signal, action, 0, 8);
        }
    }
}
