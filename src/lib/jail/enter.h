/* csrun — entering a running container (csrun exec): open the namespaces of
 * its process that differ from ours (and its root, when it shares our mount
 * namespace: it was chrooted), join them, fork the new process. */
#ifndef CSRUN_ENTER_H
#define CSRUN_ENTER_H

#include <sys/types.h>

#include "../util/error.h"

struct oci_config;

#define CSR_ENTER_N_NS 7

struct csr_enter
{
  pid_t target;
  int ns[CSR_ENTER_N_NS]; /* user, ipc, uts, net, pid, cgroup, mnt; -1: the same as ours */
  int root;               /* the container's root when it has no mount namespace, else -1 */
};

void csr_enter_init (struct csr_enter *en);
/* Open what entering PID's container takes (from the host: before any join). */
int csr_enter_open (struct csr_enter *en, pid_t pid, csr_error **err);
/* Join the namespaces (the user namespace first, which owns the others; the
 * mount namespace last, which changes our root).  The pid namespace takes
 * effect in the children forked afterwards. */
int csr_enter_join (const struct csr_enter *en, csr_error **err);
void csr_enter_release (struct csr_enter *en);

/* The process csr_enter_spawn starts. */
struct csr_enter_process
{
  const struct oci_config *proc; /* process.*, as csr_oci_prepare_process reads it */
  const void *seccomp_bpf;       /* struct sock_fprog *, or NULL */
  int listener_sock; /* >= 0: load the filter with a listener, send it here (CSR_SYNC_SECCOMP) */
  int console;       /* console socket (process.terminal), or -1 */
  int preserve_fds;  /* fds 3 .. 3+N-1 stay open for the process */
};

/* After csr_enter_join: fork P.  The child waits for a byte on the go pipe
 * (*GO: our end; close it without writing to stop the child), enters the
 * container's root when it has no mount namespace, prepares the process
 * and execs it.  *STATUS: the read end of its close-on-exec status pipe (a
 * byte: the exit code of a failure before the execve, whose message is on
 * the child's stderr; end-of-file: the execve happened).  Returns the
 * child's pid, or -1. */
pid_t csr_enter_spawn (const struct csr_enter *en, const struct csr_enter_process *p, int *go,
                       int *status, csr_error **err);

#endif
