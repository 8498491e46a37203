/* csrun — TCP sockets made inside a sandbox's network namespace (see
 * netns-socket.h). */
#include "config.h"
#include "netns-socket.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/fdpass.h"
#include "../util/syscalls.h"

#define LISTEN_BACKLOG 128

struct question
{
  uint8_t listener;
  uint8_t pad;
  uint16_t port;
};

struct answer
{
  int32_t error; /* 0: the socket comes with it */
};

/* A socket in the namespace this process is in, or -errno. */
static int
make_socket (const struct question *q)
{
  int s = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0)
    return -errno;
  if (q->listener)
    {
      int on = 1;
      struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (q->port) };
      sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
      if (setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) < 0
          || bind (s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen (s, LISTEN_BACKLOG) < 0)
        {
          int e = errno;
          close (s);
          return -e;
        }
    }
  return s;
}

/* The process, in the sandbox's user and network namespaces: one socket
 * per question until the keeper's end closes. */
static int
serve (void *arg)
{
  int sock = *(int *)arg;
  /* Nothing of the keeper's stays here but the socket and the log. */
  csr_close_all_but (&sock, 1);
  for (;;)
    {
      struct question q;
      ssize_t n = recv (sock, &q, sizeof q, 0);
      if (n == 0)
        return 0;
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return 1;
        }
      int s = n == (ssize_t)sizeof q ? make_socket (&q) : -EINVAL;
      struct answer a = { s < 0 ? -s : 0 };
      ssize_t w = csr_send_fd (sock, &a, sizeof a, s);
      if (s >= 0)
        close (s);
      if (w != (ssize_t)sizeof a)
        return 1;
    }
}

int
csr_nsock_start (const struct csr_sbx_target *t, struct csr_nsock *ns, csr_error **err)
{
  ns->pid = 0;
  ns->fd = -1;
  int sp[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
    return csr_error_errno (err, "socketpair");
  pid_t pid = csr_sbx_fork_in (t, CSR_SBX_NS_USER | CSR_SBX_NS_NET, serve, &sp[1], err);
  close (sp[1]);
  if (pid < 0)
    {
      close (sp[0]);
      return csr_error_wrap (err, "the sandbox's socket maker");
    }
  if (fcntl (sp[0], F_SETFL, O_NONBLOCK) < 0)
    {
      int e = errno;
      close (sp[0]);
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
      return csr_error_set (err, e, "fcntl");
    }
  ns->pid = pid;
  ns->fd = sp[0];
  return 0;
}

int
csr_nsock_ask (struct csr_nsock *ns, bool listener, uint16_t port, csr_error **err)
{
  struct question q = { listener ? 1 : 0, 0, port };
  ssize_t n = send (ns->fd, &q, sizeof q, MSG_NOSIGNAL);
  if (n != (ssize_t)sizeof q)
    return csr_error_errno (err, "ask the sandbox's socket maker");
  return 0;
}

int
csr_nsock_answer (struct csr_nsock *ns, int *fd, int *error)
{
  struct answer a;
  ssize_t n = csr_recv_fd (ns->fd, &a, sizeof a, fd);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return 0;
  if (n != (ssize_t)sizeof a || (a.error == 0) != (*fd >= 0))
    {
      if (*fd >= 0)
        close (*fd);
      *fd = -1;
      return -1;
    }
  *error = a.error;
  return 1;
}

int
csr_nsock_get (struct csr_nsock *ns, bool listener, uint16_t port, int timeout_ms, csr_error **err)
{
  if (csr_nsock_ask (ns, listener, port, err) < 0)
    return -1;
  struct pollfd p = { ns->fd, POLLIN, 0 };
  int r;
  while ((r = poll (&p, 1, timeout_ms)) < 0 && errno == EINTR)
    ;
  int fd = -1, error = 0;
  if (r == 0)
    return csr_error_set (err, ETIMEDOUT, "the sandbox's socket maker did not answer");
  if (r < 0 || csr_nsock_answer (ns, &fd, &error) != 1)
    return csr_error_set (err, EPIPE, "the sandbox's socket maker failed (see keeper.log)");
  if (fd < 0)
    return csr_error_set (err, error, "make a socket in the sandbox");
  return fd;
}

void
csr_nsock_stop (struct csr_nsock *ns)
{
  if (ns->fd >= 0)
    close (ns->fd);
  if (ns->pid > 0)
    {
      kill (ns->pid, SIGKILL);
      while (waitpid (ns->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  ns->fd = -1;
  ns->pid = 0;
}
