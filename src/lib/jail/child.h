/* csrun — the jail side: the protocol on the sync socket, the set-up steps
 * run in the new namespaces, and the payload's final steps before execve. */
#ifndef CSRUN_CHILD_H
#define CSRUN_CHILD_H

#include <stdint.h>

#include "../util/error.h"
#include "spec.h"

enum csr_sync_type
{
  CSR_SYNC_ERROR = 1,   /* set-up failed: err + text */
  CSR_SYNC_READY = 2,   /* the payload has been exec'ed */
  CSR_SYNC_EXIT = 3,    /* the payload ended: status = wait status */
  CSR_SYNC_HOOKS = 4,   /* OCI: the namespaces exist; run prestart/createRuntime, then send 'H' */
  CSR_SYNC_PID = 5,     /* OCI: status = the container's pid (from the intermediate process) */
  CSR_SYNC_SECCOMP = 6, /* OCI: the seccomp listener is attached (SCM_RIGHTS) */
};

struct csr_sync_msg
{
  uint32_t type;
  int32_t err;    /* errno of the failed step */
  int32_t status; /* wait status for CSR_SYNC_EXIT */
  char text[500];
};

/* Send a message; best effort (the supervisor may be gone). */
void csr_sync_send (int fd, uint32_t type, int status, const csr_error *e);

/* Entry point of the cloned child (it becomes the jail's pid 1).  Never returns. */
__attribute__ ((noreturn)) void csr_child_main (const struct jail_spec *spec, int syncfd,
                                                const int *cgroup_fds, int n_cgroup_fds);

#endif
