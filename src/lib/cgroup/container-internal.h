/* csrun — what oci/cgroup.c (hierarchies, directories, freeze, destroy)
 * and oci/cgroup-res.c (linux.resources: parsing and the limit files) share.
 * Not for other users. */
#ifndef CSRUN_OCI_CGROUP_INTERNAL_H
#define CSRUN_OCI_CGROUP_INTERNAL_H

#include <stdbool.h>

#include "../util/error.h"
#include "container.h"

/* Write VAL to DIR/FILE in one write(2).  0 written, 1 when the file does
 * not exist (controller not there), -1 on an error. */
int oci_cg_write (const char *dir, const char *file, const char *val, csr_error **err);
/* Read DIR/FILE into *OUT (malloc'ed).  0 read, 1 when it does not exist, -1 error. */
int oci_cg_read (const char *dir, const char *file, char **out, csr_error **err);
bool oci_cg_exists (const char *dir, const char *file);

/* Checks that need no cgroup (made before anything is created). */
int oci_cgroup_resources_check (const struct oci_cgroup_resources *r, bool update, csr_error **err);
/* Write R into the directories of CG (a v2 leaf; or v1 leaves, with or
 * without a hybrid unified one).  UPDATE: a running container's cgroup
 * (only the given fields; a cpu quota alone keeps the period). */
int oci_cgroup_apply (const struct oci_cgroup *cg, const struct oci_cgroup_resources *r,
                      bool update, struct oci_cgroup_applied *a, csr_error **err);

#endif
