/* csrun — parsers for option values (pure, unit-tested). */
#ifndef CSRUN_PARSE_H
#define CSRUN_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* "512M", "1.5G", "64k", "4096", "2GiB", "100MB" (binary multiples: K=1024).
 * Rejects empty, negative, junk, overflow, and values above MAX. */
int csr_parse_size (const char *s, uint64_t max, uint64_t *out, csr_error **err);
/* "30", "1.5", "500ms", "2s", "5m", "1h" -> seconds (double).  Must be > 0 and <= MAX_S. */
int csr_parse_duration (const char *s, double max_s, double *out, csr_error **err);
/* A decimal integer in [MIN, MAX]. */
int csr_parse_uint (const char *s, uint64_t min, uint64_t max, uint64_t *out, csr_error **err);
/* "KEY=VALUE": KEY must be a valid environment name ([A-Za-z_][A-Za-z0-9_]*).
 * Sets *key_len to the length of KEY; *has_value false for a bare "KEY". */
int csr_parse_env (const char *s, size_t *key_len, bool *has_value, csr_error **err);

#endif
