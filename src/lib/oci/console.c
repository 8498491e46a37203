/* csrun — a container's terminal used from the caller's stdio (see
 * console.h).  The runtime spec leaves it to the runtime how a terminal
 * reaches the user without --console-socket; runc and crun, in the
 * foreground, keep the master and copy between it and their own stdio. */
#include "config.h"
#include "console.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/tty.h"

int
oci_console_pair (int *ours, int *theirs, csr_error **err)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "terminal: socketpair");
  *ours = sv[0];
  *theirs = sv[1];
  return 0;
}

int
oci_console_recv (int sock, csr_error **err)
{
  char byte;
  int fd;
  ssize_t n = csr_recv_fd (sock, &byte, 1, &fd);
  if (n < 0)
    return csr_error_errno (err, "terminal: receive the master");
  if (n == 0 || fd < 0)
    {
      if (fd >= 0)
        close (fd);
      return csr_error_set (err, EPROTO, "terminal: the container sent no terminal");
    }
  return fd;
}

int
oci_console_proxy (int master, int in, int out, pid_t pid, csr_error **err)
{
  struct csr_tty_relay r = { .master = master, .in = in, .out = out, .pid = pid, .end_fd = -1 };
  return csr_tty_relay (&r, err);
}
