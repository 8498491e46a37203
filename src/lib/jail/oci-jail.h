/* csrun — creating an OCI container with the jail engine (see oci-jail.c). */
#ifndef CSRUN_OCI_JAIL_H
#define CSRUN_OCI_JAIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

/* The runtime-spec state JSON of the container being created (PID), for its
 * hooks (status "created") or, with CREATING, for the seccomp agent (status
 * "creating": the listener is sent while the container is set up, as crun
 * says); malloc'ed, NULL on ENOMEM. */
typedef char *(*csr_oci_state_fn) (pid_t pid, bool creating, void *data);

/* Clone the container described by SPEC (SPEC->oci, rootfs_dir, oci_bundle,
 * oci_exec_fifo, oci_console, oci_preserve_fds, seccomp_bpf, cgroup), run
 * its prestart and createRuntime hooks when it reaches them, and return
 * once it waits for `csrun start` (*PID_OUT: its host pid).  On an error the
 * half-made container is killed and reaped; its set-up step and errno are in
 * *ERR. */
int csr_oci_jail_create (const struct jail_spec *spec, csr_oci_state_fn state_fn, void *data,
                         pid_t *pid_out, csr_error **err);

#endif
