/* A diagnostic shim for io500's find phase, never used by storlab itself.
 *
 * pfind turns `-name *01*` into the POSIX regex `.*01.*` and calls glibc's
 * regexec() on every directory entry (pfind.c); storlab's find tests the
 * same names for the substring in place. Preloaded into io500
 * (LD_PRELOAD, through mpirun -x), this library answers regexec() for a
 * pattern of the form `.*LITERAL.*` (LITERAL without regex metacharacters)
 * with strstr(), which gives the same answer for every name, and passes
 * every other pattern to glibc's regexec(). The file-system work of the
 * phase is unchanged (the same getdents64, the same lstat of matching
 * names); only the per-entry CPU of the name test changes. See
 * scripts/compare-io500.sh (EQUALIZE=1) and docs/PERFORMANCE.md.
 *
 * build: cc -O2 -shared -fPIC -o regexec-substring.so regexec-substring.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 16
static struct {
    const regex_t *re;
    char lit[256];
} slots[SLOTS];

static int (*real_regcomp)(regex_t *, const char *, int);
static int (*real_regexec)(const regex_t *, const char *, size_t, regmatch_t[], int);

/* Copies LIT of `.*LIT.*` into out and returns 1; 0 for any other pattern. */
static int literal_of(const char *p, char *out, size_t cap) {
    size_t n = strlen(p);
    if (n < 5 || strncmp(p, ".*", 2) != 0 || strcmp(p + n - 2, ".*") != 0) return 0;
    size_t len = n - 4;
    if (len + 1 > cap) return 0;
    for (size_t i = 0; i < len; i++) {
        if (strchr(".[]()*+?{}|^$\\", p[2 + i])) return 0;
    }
    memcpy(out, p + 2, len);
    out[len] = 0;
    return 1;
}

/* The index of the slot that answers for `re` (NULL: a free slot), or -1. */
static int slot_of(const regex_t *re) {
    for (int i = 0; i < SLOTS; i++) {
        if (slots[i].re == re) return i;
    }
    return -1;
}

int regcomp(regex_t *re, const char *pattern, int flags) {
    if (!real_regcomp) real_regcomp = dlsym(RTLD_NEXT, "regcomp");
    int r = real_regcomp(re, pattern, flags);
    /* A regex_t compiled again (or its memory reused) no longer answers
     * for its old pattern. */
    int i = slot_of(re);
    if (i >= 0) slots[i].re = NULL;
    if (r == 0 && flags == 0 && (i = slot_of(NULL)) >= 0 &&
        literal_of(pattern, slots[i].lit, sizeof slots[i].lit)) {
        slots[i].re = re;
    }
    return r;
}

int regexec(const regex_t *re, const char *s, size_t nmatch, regmatch_t m[_Restrict_arr_ _REGEX_NELTS(nmatch)], int eflags) {
    int i;
    if (re != NULL && nmatch == 0 && eflags == 0 && (i = slot_of(re)) >= 0) {
        return strstr(s, slots[i].lit) ? 0 : REG_NOMATCH;
    }
    if (!real_regexec) real_regexec = dlvsym(RTLD_NEXT, "regexec", "GLIBC_2.3.4");
    return real_regexec(re, s, nmatch, m, eflags);
}
