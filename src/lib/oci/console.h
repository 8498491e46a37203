/* csrun — a container's terminal used from the caller's own stdio: what
 * runc does for `run` and `exec -t` in the foreground without
 * --console-socket.  The container's process still gets a pseudo-terminal
 * of its own (from its devpts); csrun keeps the master and copies between it
 * and its standard input/output, with the caller's terminal (if stdin is
 * one) in raw mode meanwhile and its window size passed on. */
#ifndef CSRUN_OCI_CONSOLE_H
#define CSRUN_OCI_CONSOLE_H

#include <sys/types.h>

#include "../util/error.h"

/* A connected AF_UNIX socket pair standing in for --console-socket: *THEIRS
 * goes to the container (which sends the master over it), *OURS stays. */
int oci_console_pair (int *ours, int *theirs, csr_error **err);
/* The terminal master the container sent over SOCK (SCM_RIGHTS); a new
 * close-on-exec descriptor, or -1 with *ERR (EOF: the container died
 * before it sent one). */
int oci_console_recv (int sock, csr_error **err);
/* Copy IN -> MASTER and MASTER -> OUT until PID (our child) has exited and
 * the terminal is drained, or every slave is closed.  Meanwhile SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 go to PID and SIGWINCH
 * copies IN's (else OUT's) window size to MASTER.  IN is raw while it is a
 * terminal, restored before returning.  PID is not reaped (waitid WNOWAIT):
 * the caller waits for it. */
int oci_console_proxy (int master, int in, int out, pid_t pid, csr_error **err);

#endif
