/* csrun — the OCI face of the launcher: creating an OCI container (see
 * oci-jail.c). */
#ifndef CSRUN_OCI_JAIL_H
#define CSRUN_OCI_JAIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

struct oci_config;
struct csr_oci_premounts;

/* An OCI container: the jail follows the bundle's config.json (its
 * namespaces, mounts, devices, process, capabilities, rlimits); the process
 * is pid 1 itself (no csrun init) and, with an exec FIFO, waits for
 * `csrun start`. */
struct csr_oci_spec
{
  struct jail_spec jail; /* first: rootfs, seccomp, cgroup (the maps come from the config) */
  const struct oci_config *config;
  const char *bundle; /* absolute: relative bind sources are relative to it */
  int exec_fifo;      /* O_PATH fd of the exec FIFO, or -1: exec at once */
  int console;        /* connected console socket (process.terminal), or -1 */
  int preserve_fds;   /* fds 3 .. 3+N-1 stay open for the process */
  int listen_fds;     /* the first N of them are LISTEN_FDS (socket activation) */
  bool no_pivot;      /* --no-pivot: move the root and chroot instead */
  /* Bind sources and device nodes made as root, or NULL (oci-premount.c;
   * csr_oci_jail_create makes them itself when it should). */
  struct csr_oci_premounts *premounts;
};

/* -1 for the fds, the rest zero. */
void csr_oci_spec_init (struct csr_oci_spec *spec);

/* What the OCI command supplies (DATA is handed back).  STATE: the
 * runtime-spec state JSON of the container being created (PID), for its
 * hooks (status "created") or, with CREATING, for the seccomp agent (status
 * "creating": the listener is sent while the container is set up, as crun
 * says); malloc'ed, NULL on ENOMEM.  RUNTIME_HOOKS: run the prestart and
 * createRuntime hooks (the container has its namespaces and waits); called
 * only when the config has some. */
struct csr_oci_create_ops
{
  char *(*state) (pid_t pid, bool creating, void *data);
  int (*runtime_hooks) (pid_t pid, void *data, csr_error **err);
  void *data;
};

/* Clone the container described by SPEC, have OPS run its prestart and
 * createRuntime hooks when it reaches them, and return once it waits for
 * `csrun start` (*PID_OUT: its host pid).  On an error the half-made
 * container is killed and reaped; its set-up step and errno are in *ERR. */
int csr_oci_jail_create (const struct csr_oci_spec *spec, const struct csr_oci_create_ops *ops,
                         pid_t *pid_out, csr_error **err);

#endif
