#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
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
