/* csrun — where `csrun exec --cgroup` puts the new process: the
 * container's cgroup directories, or sub-cgroups of them, as runc takes the
 * option (one PATH for every hierarchy, or CONTROLLER[,CONTROLLER]:PATH per
 * v1 controller). */
#ifndef CSRUN_OCI_EXEC_CGROUP_H
#define CSRUN_OCI_EXEC_CGROUP_H

#include <stddef.h>

#include "../util/error.h"

/* The directories (malloc'ed, *N_OUT of them, the v1 ones first, then V2)
 * whose cgroup.procs the process joins, for the container's v2 directory V2
 * (may be NULL) and v1 directories V1[N_V1], and the --cgroup arguments
 * ARGS[N_ARGS].  MOUNTINFO is a /proc/self/mountinfo text (it says which
 * controllers each v1 hierarchy has); NULL reads the real one.  Errors use
 * runc's words: "invalid --cgroup argument", "... is not a sub cgroup
 * path", "unknown controller ...". */
int oci_exec_cgroup_dirs (const char *v2, char *const *v1, size_t n_v1, const char *const *args,
                          size_t n_args, const char *mountinfo, char ***out, size_t *n_out,
                          csr_error **err);
void oci_exec_cgroup_dirs_free (char **dirs, size_t n);
/* BASE + "/" + SUB with SUB's "." and ".." resolved lexically; ".." may
 * not climb above BASE.  Malloc'ed into *OUT. */
int oci_sub_cgroup (const char *base, const char *sub, char **out, csr_error **err);

#endif
