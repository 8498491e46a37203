/* csrun — the container process of `csrun create` (see oci-child.c). */
#ifndef CSRUN_OCI_CHILD_H
#define CSRUN_OCI_CHILD_H

#include "spec.h"

/* Entry point of the cloned container process (SPEC->oci set).  Protocol on
 * SYNCFD: read 'G'; when the config has createContainer or startContainer
 * hooks, read one message holding the state JSON; set up; with prestart or
 * createRuntime hooks send CSR_SYNC_HOOKS and read 'H'; send CSR_SYNC_READY
 * (or CSR_SYNC_ERROR); then wait on the exec FIFO and execve.  Never returns. */
__attribute__ ((noreturn)) void csr_oci_child_main (const struct jail_spec *spec, int syncfd,
                                                    const int *cgroup_fds, int n_cgroup_fds);

#endif
