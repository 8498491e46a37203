/* csrun — where `csrun exec --cgroup` puts the new process: the
 * container's cgroup directories, or sub-cgroups of them, as runc takes the
 * option (one PATH for every hierarchy, or CONTROLLER[,CONTROLLER]:PATH per
 * v1 controller). */
#ifndef CSRUN_OCI_EXEC_CGROUP_H
#define CSRUN_OCI_EXEC_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#include "../util/error.h"

/* The directories (malloc'ed, *N_OUT of them, the v1 ones first, then V2)
 * whose cgroup.procs the process joins, for the container's v2 directory V2
 * (may be NULL) and v1 directories V1[N_V1], and the --cgroup arguments
 * ARGS[N_ARGS].  MOUNTINFO is a /proc/self/mountinfo text (it says which
 * controllers each v1 hierarchy has); NULL reads the real one.  Errors use
 * runc's words: "invalid --cgroup argument", "... is not a sub cgroup
 * path", "unknown controller ...". */
int csr_cgroup_exec_dirs (const char *v2, char *const *v1, size_t n_v1, const char *const *args,
                          size_t n_args, const char *mountinfo, char ***out, size_t *n_out,
                          csr_error **err);
void csr_cgroup_exec_dirs_free (char **dirs, size_t n);
/* The cgroup.procs files (O_WRONLY, O_CLOEXEC) of those directories, opened
 * into FDS (at most MAX; *N of them) before the process enters the
 * container's mount namespace.  A missing one: runc's "adding pid to
 * cgroups: open ...: no such file or directory". */
int csr_cgroup_exec_open (const char *v2, char *const *v1, size_t n_v1, const char *const *args,
                          size_t n_args, int *fds, size_t max, size_t *n, csr_error **err);
/* Write PID into each of FDS[N] (all are tried); -1 with the first error. */
int csr_cgroup_exec_join (const int *fds, size_t n, pid_t pid, csr_error **err);
/* BASE + "/" + SUB with SUB's "." and ".." resolved lexically; ".." may
 * not climb above BASE.  Malloc'ed into *OUT. */
int csr_cgroup_sub_path (const char *base, const char *sub, char **out, csr_error **err);

#endif
