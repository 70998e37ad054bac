#include "process_guard.h"
#include <sys/prctl.h>
#include <sys/resource.h>

int ak_forbid_dumps(void) {
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return -1;
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

int ak_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
