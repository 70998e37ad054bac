// Embedded Swift's Double(String) calls this function of the Swift runtime, which Embedded
// Swift does not ship: the same contract, strtod(3) in the C locale, NULL when the value is
// out of range (as the full runtime's Stubs.cpp has it). StrictJSON's numbers need it.
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>

const char *_swift_stdlib_strtod_clocale(const char *text, double *result) {
    static locale_t c_locale;
    if (c_locale == (locale_t)0) c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    char *end;
    errno = 0;
    double value = strtod_l(text, &end, c_locale);
    *result = value;
    if ((value == HUGE_VAL || value == -HUGE_VAL || value == 0.0) && errno == ERANGE) return NULL;
    return end;
}
