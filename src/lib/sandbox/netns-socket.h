/* csrun — TCP sockets made inside a sandbox's network namespace, for the
 * keeper's port forwards (keeper-ports.c).
 *
 * A socket stays in the network namespace it was made in.  A small process
 * forked by the keeper joins the sandbox's user and network namespaces
 * (csr_sbx_fork_in, exec.h) and, for each request on a unix socket, makes a
 * socket there and sends it back (SCM_RIGHTS); the keeper then connects or
 * accepts on it itself, from outside.  The process holds nothing else (its
 * other descriptors are closed), is not dumpable, dies with the keeper, and
 * lives until the jail stops (csr_nsock_stop). */
#ifndef CSRUN_SANDBOX_NETNS_SOCKET_H
#define CSRUN_SANDBOX_NETNS_SOCKET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "exec.h"

struct csr_nsock
{
  pid_t pid; /* the process; 0: none */
  int fd;    /* the keeper's end (non-blocking); -1: none */
};

/* Start the process for the running sandbox T. */
int csr_nsock_start (const struct csr_sbx_target *t, struct csr_nsock *ns, csr_error **err);
/* Ask for a socket: LISTENER false, a non-blocking TCP socket (IPv4) to
 * connect to the sandbox's 127.0.0.1; true, a non-blocking one listening on
 * the sandbox's 127.0.0.1:PORT.  Answers come in the order asked. */
int csr_nsock_ask (struct csr_nsock *ns, bool listener, uint16_t port, csr_error **err);
/* The next answer: 1 with *FD the socket, or *FD -1 and *ERROR the errno
 * that made it fail; 0 when none is there yet; -1 when the process is gone. */
int csr_nsock_answer (struct csr_nsock *ns, int *fd, int *error);
/* Ask and wait for the answer (at most TIMEOUT_MS): no other question may
 * be waiting for one.  Returns the socket. */
int csr_nsock_get (struct csr_nsock *ns, bool listener, uint16_t port, int timeout_ms,
                   csr_error **err);
/* End the process (killed, reaped) and close the keeper's end. */
void csr_nsock_stop (struct csr_nsock *ns);

#endif
