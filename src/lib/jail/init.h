/* csrun — the jail's pid 1: start the payload, reap everything, forward signals. */
#ifndef CSRUN_INIT_H
#define CSRUN_INIT_H

#include <signal.h>
#include <sys/types.h>

/* Run as pid 1 after set-up.  START_PAYLOAD runs in the forked child and must
 * not return on success (it execs).  Reports READY/EXIT on SYNCFD and exits. */
__attribute__ ((noreturn)) void
csr_init_run (int syncfd, void (*start_payload) (void *arg, int syncfd, const sigset_t *oldmask),
              void *arg);

#endif
