#ifndef AUTHKIT_CHILD_PROCESS_H
#define AUTHKIT_CHILD_PROCESS_H
#include <spawn.h>

// GNU extensions Swift's Glibc module does not show (it is built without _GNU_SOURCE).

/// pipe2(fds, O_CLOEXEC): both ends close-on-exec from the moment they exist.
int ak_pipe_cloexec(int fds[2]);
/// posix_spawn_file_actions_addclosefrom_np: the child closes every descriptor >= from.
int ak_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);
/// posix_spawn_file_actions_addchdir_np.
int ak_spawn_chdir(posix_spawn_file_actions_t *actions, const char *path);
/// SIGRTMAX (a function call in glibc).
int ak_sigrtmax(void);
/// The signals glibc keeps for itself (32 up to SIGRTMIN), which its sigaction refuses, back to
/// their default disposition where a parent left them ignored (through the system call; a
/// handler glibc installed is left alone, and `exec` resets it).
void ak_unignore_reserved_signals(void);

#endif
