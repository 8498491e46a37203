/* csrun — UTF-8 validation and repair. */
#ifndef CSRUN_UTF8_H
#define CSRUN_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when S[0..LEN) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool csr_utf8_valid (const char *s, size_t len);
/* The length of the well-formed sequence at S[0] (LEN >= 1), or 0 when it is
 * ill-formed: then *BAD (may be NULL) is the length of its maximal subpart
 * (at least 1 byte), as U+FFFD replacement counts it. */
size_t csr_utf8_next (const char *s, size_t len, size_t *bad);
/* A malloc'ed copy where every ill-formed sequence is replaced by U+FFFD. */
char *csr_utf8_sanitize (const char *s, size_t len, size_t *out_len);

#endif
