/* csrun — notices given once per cache directory and host boot. */
#ifndef CSRUN_NOTICE_H
#define CSRUN_NOTICE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

/* Is this the first time since the host booted that the notice NAME is given
 * for the cache directory CACHE_DIR?  The marker is the empty file
 * CACHE_DIR/NAME.BOOT_ID (BOOT_ID from /proc/sys/kernel/random/boot_id),
 * created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600, in the directory opened
 * through the cache trust check (util/trust.c); markers NAME.* of earlier
 * boots are removed when a new one is made.  Returns 1 when this call made
 * the marker (give the notice), 0 when it was already there (a regular file
 * of the effective uid), -1 with *ERR when it can't tell (no boot id, the
 * directory is not trusted or not writable, a foreign entry in the way):
 * then give the notice. */
int csr_notice_first (const char *cache_dir, const char *name, csr_error **err);

/* Pure part, for tests: is TEXT (LEN bytes, a trailing newline allowed) a
 * boot id, 36 characters of hex digits and dashes?  Copies it to OUT (37
 * bytes). */
bool csr_notice_boot_id (const char *text, size_t len, char out[37]);

#endif
