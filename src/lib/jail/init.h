/* csrun — the jail's pid 1: start the payload, reap everything, forward signals. */
#ifndef CSRUN_INIT_H
#define CSRUN_INIT_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* What init does last, when the payload and everything else have ended and
 * before it reports the exit: FN (ARG, FD); FD is kept open for it (e.g. the
 * --out pack). */
struct csr_init_exit
{
  int fd;
  void (*fn) (void *arg, int fd);
  void *arg;
};

/* Run as pid 1 after set-up.  START_PAYLOAD runs in the forked child and must
 * not return on success (it execs).  Reports READY/EXIT on SYNCFD and exits.
 * AT_EXIT may be NULL.  EXECS: START_PAYLOAD ends in execve or _exit, never
 * in a loop of its own, so the child may borrow init's memory until then
 * (vfork: no copy of csrun's address space to make, fault in and tear down
 * at the execve; init waits meanwhile). */
__attribute__ ((noreturn)) void
csr_init_run (int syncfd, void (*start_payload) (void *arg, int syncfd, const sigset_t *oldmask),
              void *arg, const struct csr_init_exit *at_exit, bool execs);

#endif
