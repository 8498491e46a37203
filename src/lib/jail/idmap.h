/* csrun — user-namespace id maps: choose them, format them, write them. */
#ifndef CSRUN_IDMAP_H
#define CSRUN_IDMAP_H

#include <stddef.h>
#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

/* Host id the jail's root maps to when csrun itself runs as root. */
#define CSR_ROOT_MAPPED_ID 65534

/* Fill the maps of SPEC that are empty: rootless -> "0 <euid> 1"; root ->
 * "0 65534 1" so that the jail's root is an unprivileged host identity. */
void csr_idmap_default (struct jail_spec *spec, uid_t euid, gid_t egid);

/* Find the subordinate range of USER (name) or UID in the text of
 * /etc/subuid or /etc/subgid. Returns 1 and fills start/count when found,
 * 0 when not, -1 on a malformed line. */
int csr_idmap_find_subid (const char *text, const char *user, uid_t uid, uint32_t *start,
                          uint32_t *count, csr_error **err);

/* --user UID:GID: map the jail's 0 as csr_idmap_default does, and 1..N to the
 * invoking user's subordinate ranges from SUBUID_TEXT / SUBGID_TEXT (the
 * contents of /etc/subuid and /etc/subgid), so that UID and GID (1..N) are
 * ids of their own on the host.  Rootless, the maps are written with
 * newuidmap/newgidmap.  Errors say which file lacks a range or that the
 * range is too small. */
int csr_idmap_subordinate (struct jail_snippet *sn, const char *user, uid_t euid, gid_t egid,
                           const char *subuid_text, const char *subgid_text, uid_t uid, gid_t gid,
                           csr_error **err);

/* Format MAPS as the text of /proc/PID/uid_map ("inside outside count\n"...). */
int csr_idmap_format (const struct csr_idmap *maps, size_t n, char *buf, size_t bufsz);

/* Validate: counts > 0, no overflow, no overlapping inside or outside ranges. */
int csr_idmap_validate (const struct csr_idmap *maps, size_t n, csr_error **err);

/* Write the maps of SPEC for process PID (setgroups "deny" when writing directly
 * as an unprivileged user; newuidmap/newgidmap when spec->use_newidmap). */
int csr_idmap_write (pid_t pid, const struct jail_spec *spec, csr_error **err);

#endif
