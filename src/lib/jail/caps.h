/* csrun — capabilities and privileges of the payload. */
#ifndef CSRUN_CAPS_H
#define CSRUN_CAPS_H

#include "../util/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Become root of the user namespace we are in (also when the outer uid is
 * not the one mapped to 0, as when csrun runs as host root); a namespace
 * that denies setgroups is fine. */
int csr_caps_become_ns_root (csr_error **err);
/* The same for UID and GID (mapped there), keeping the capabilities a new
 * namespace gave (a zygote's jail maps no root: issue 17, zygote.c). */
int csr_caps_become_ns_id (uid_t uid, gid_t gid, csr_error **err);

/* Switch to UID/GID (ids inside the user namespace), empty every capability
 * set (bounding, ambient, inheritable, permitted, effective), lock the
 * securebits so an exec as uid 0 grants nothing, and set no_new_privs. */
int csr_caps_drop_all (uid_t uid, gid_t gid, csr_error **err);

/* Capability sets as bit masks (1ULL << CAP_X), as an OCI config gives them. */
struct csr_cap_sets
{
  uint64_t bounding, effective, inheritable, permitted, ambient;
};
/* An OCI process: drop what the bounding set lacks, switch to UID/GID with
 * GROUPS as supplementary groups (N_GROUPS CSR_CAPS_KEEP_GROUPS: the
 * current ones stay), keep exactly SETS, and set no_new_privs when asked. */
#define CSR_CAPS_KEEP_GROUPS ((size_t)-1)
int csr_caps_apply_oci (uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups,
                        const struct csr_cap_sets *sets, bool no_new_privs, csr_error **err);

#endif
