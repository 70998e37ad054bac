#ifndef AUTHKIT_PROCESS_GUARD_H
#define AUTHKIT_PROCESS_GUARD_H

/// prctl(PR_SET_DUMPABLE, 0) and RLIMIT_CORE 0: no core file, and no ptrace or
/// /proc/PID/mem by other processes of the same user. 0, or -1 with errno.
int ak_forbid_dumps(void);

/// Whether the process is dumpable (prctl(PR_GET_DUMPABLE)).
int ak_is_dumpable(void);

#endif
