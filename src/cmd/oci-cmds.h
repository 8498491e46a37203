/* csrun — what the OCI commands on the state directory share (oci-cmds.c):
 * their argument parsing, loading a container's state, its cgroup and
 * processes, its logged hooks, --regex. */
#ifndef CSRUN_CMD_OCI_CMDS_H
#define CSRUN_CMD_OCI_CMDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci.h"
#include "cgroup/cgroup.h"
#include "oci/resources.h"
#include "oci/state.h"

/* Parse "csrun CMD [flags] ID [MORE]": FLAGS lists the boolean flags the
 * command accepts as (long, short) pairs ("--force", "-f"); other words
 * starting with '-' are errors (but a second operand such as "-9"). */
struct simple_args
{
  const char *id;
  const char *more;
  bool flag[4];
  const char *format; /* --format VALUE / -f VALUE (list, ps) */
};
int simple_parse (const struct csr_global *g, int argc, char **argv, const char *const *flags,
                  size_t n_flags, bool want_id, bool allow_more, bool allow_format,
                  struct simple_args *a);
/* The help of "csrun CMD" (argv[0]); 0 (the exit status). */
int help_of (const char *argv0);
/* Load the state of ID (failing the command when it can't): 0, or 1. */
int load (const struct csr_global *g, const char *root, const char *id, struct oci_state *st);
/* The container's cgroup as the state recorded it, or NULL (none, or no
 * memory); csr_cgroup_free it (cleanup_cgroup). */
struct csr_cgroup *state_cgroup (const struct oci_state *st);
/* Processes of the container: its cgroup's, else its pid namespace's. */
size_t container_pids (const struct oci_state *st, pid_t *out, size_t cap);
/* Run the hooks of STAGE from the kept config, logging failures. */
void run_hooks_logged (const struct csr_global *g, const struct oci_state *st, int stage);
/* Parse ARGV, find the state root, load the state: 0, or 1 after
 * reporting the failure. */
int open_container (struct csr_global *g, int argc, char **argv, bool allow_format,
                    struct simple_args *a, char **root, struct oci_state *st);
/* Thaw a paused container's cgroup (after SIGKILL, so that it dies). */
void thaw (const struct csr_global *g, const struct oci_state *st);
/* --regex (crun's): FN on every container whose id matches PATTERN. */
int for_each_matching (struct csr_global *g, const char *root, const char *pattern,
                       int (*fn) (struct csr_global *, const char *, const char *, void *),
                       void *data);

#endif
