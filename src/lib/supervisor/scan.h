/* csrun — the silent-failure scan: output that says the run failed even when
 * the exit status says it worked (policies/silent-failure.conf). */
#ifndef CSRUN_SCAN_H
#define CSRUN_SCAN_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

struct csr_scan
{
  char **sources; /* the patterns as written */
  regex_t *res;   /* compiled: POSIX extended, case-insensitive; \s \S \w \W \b work (glibc),
                     \d \D are translated to [[:digit:]] [^[:digit:]] */
  size_t n;
};

/* One pattern per line; '#' comments and blank lines ignored.  Errors name the line.
 * Patterns are appended to S (zero it first); on error S is left as it was.
 * A pattern that matches an empty line is refused. */
int csr_scan_parse (const char *text, size_t len, struct csr_scan *s, csr_error **err);
int csr_scan_load (const char *path, struct csr_scan *s, csr_error **err);
int csr_scan_add (struct csr_scan *s, const char *pattern, csr_error **err);
void csr_scan_release (struct csr_scan *s);

/* Search TEXT line by line; on the first match set *pattern (points into S)
 * and *line (a malloc'ed copy of the matching line, without the newline, at
 * most 500 bytes) and return true. */
bool csr_scan_match (const struct csr_scan *s, const char *text, size_t len, const char **pattern,
                     char **line);

#endif
