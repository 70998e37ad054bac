// Embedded Swift's Double(String) calls this function of the Swift runtime, which Embedded
// Swift does not ship: the same contract, strtod(3) in the C locale — the lean client never
// calls setlocale(3), so the C locale is the one in effect — and NULL when the value is out of
// range (as the full runtime's Stubs.cpp has it). StrictJSON's numbers need it.
#include <errno.h>
#include <math.h>
#include <stdlib.h>

const char *_swift_stdlib_strtod_clocale(const char *text, double *result) {
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    *result = value;
    if ((value == HUGE_VAL || value == -HUGE_VAL || value == 0.0) && errno == ERANGE) return NULL;
    return end;
}
