/* csrun — the jail engine: clone into new namespaces, set the jail up, run one
 * payload under a tiny init, and report how it ended. */
#ifndef CSRUN_JAIL_H
#define CSRUN_JAIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "spec.h"

struct csr_jail
{
  pid_t pid;  /* host pid of the jail's init */
  int pidfd;  /* pidfd of init (-1 if the kernel has none) */
  int syncfd; /* supervisor end of the sync socket */
};

struct csr_jail_exit
{
  bool exited;     /* the payload exited normally: exit_code is valid */
  int exit_code;   /* exit status of the payload */
  int signal;      /* signal that ended the payload (or the jail), 0 if none */
  uint64_t cpu_us; /* user + system cpu time of the jail's processes */
  uint64_t maxrss_kib;
};

/* Clone the jail and wait until the payload has been exec'ed (or failed to).
 * Errors inside the jail (the failing step and its errno) come back in *err. */
int csr_jail_start (const struct jail_snippet *spec, struct csr_jail *jail, csr_error **err);
/* Kill every process in the jail (SIGKILL to init: the pid namespace goes with it). */
int csr_jail_kill (struct csr_jail *jail, int sig);
/* Kill the payload (the children of init), so init reaps it and reports its
 * status and resource use before the pid namespace goes.  Returns how many
 * processes were signalled; 0 means the caller should kill init instead. */
int csr_jail_kill_payload (struct csr_jail *jail);
/* After POLLIN on jail->pidfd (or at any time: blocks), reap init and fill *ex. */
int csr_jail_wait (struct csr_jail *jail, struct csr_jail_exit *ex, csr_error **err);
void csr_jail_release (struct csr_jail *jail);

#endif
