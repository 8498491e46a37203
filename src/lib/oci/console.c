/* csrun — a container's terminal used from the caller's stdio (see
 * console.h).  The runtime spec leaves it to the runtime how a terminal
 * reaches the user without --console-socket; runc and crun, in the
 * foreground, keep the master and copy between it and their own stdio. */
#include "config.h"
#include "console.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

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
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr msg
      = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
  ssize_t n;
  while ((n = recvmsg (sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
    ;
  if (n < 0)
    return csr_error_errno (err, "terminal: receive the master");
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
  if (n == 0 || cm == NULL || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS
      || cm->cmsg_len != CMSG_LEN (sizeof (int)))
    return csr_error_set (err, EPROTO, "terminal: the container sent no terminal");
  int fd;
  memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  return fd;
}

static void
copy_size (int from, int to)
{
  struct winsize ws;
  if (ioctl (from, TIOCGWINSZ, &ws) == 0 && (ws.ws_row || ws.ws_col))
    (void)ioctl (to, TIOCSWINSZ, &ws);
}

static bool
exited (pid_t pid)
{
  siginfo_t si;
  memset (&si, 0, sizeof si);
  if (waitid (P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno == ECHILD;
  return si.si_pid == pid;
}

/* One read from FROM written whole to TO: 1 copied, 0 end (EOF, or EIO from
 * a master without slaves), -1 would block, -2 write error. */
static int
copy_once (int from, int to)
{
  char buf[8192];
  ssize_t n = read (from, buf, sizeof buf);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR ? -1 : 0;
  if (n == 0)
    return 0;
  return csr_write_all (to, buf, (size_t)n, NULL) < 0 ? -2 : 1;
}

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

int
oci_console_proxy (int master, int in, int out, pid_t pid, csr_error **err)
{
  sigset_t set, old;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigaddset (&set, SIGWINCH);
  sigaddset (&set, SIGCHLD);
  if (sigprocmask (SIG_BLOCK, &set, &old) < 0)
    return csr_error_errno (err, "terminal: sigprocmask");
  cleanup_close int sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    {
      int saved = errno;
      sigprocmask (SIG_SETMASK, &old, NULL);
      errno = saved;
      return csr_error_errno (err, "terminal: signalfd");
    }
  struct termios saved_tio;
  bool raw = in >= 0 && tcgetattr (in, &saved_tio) == 0;
  if (raw)
    {
      struct termios tio = saved_tio;
      cfmakeraw (&tio);
      raw = tcsetattr (in, TCSANOW, &tio) == 0;
    }
  int size_src = in >= 0 && isatty (in) ? in : out;
  copy_size (size_src, master);
  int flags = fcntl (master, F_GETFL);
  if (flags >= 0)
    (void)fcntl (master, F_SETFL, flags | O_NONBLOCK);

  bool in_open = in >= 0, done = false;
  int r = 0;
  while (!done)
    {
      struct pollfd p[3] = { { master, POLLIN, 0 }, { sfd, POLLIN, 0 }, { in, POLLIN, 0 } };
      /* The timeout only re-checks the child (its SIGCHLD may predate the mask). */
      int n = poll (p, in_open ? 3 : 2, 500);
      if (n < 0 && errno != EINTR)
        {
          r = csr_error_errno (err, "terminal: poll");
          break;
        }
      if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          int c;
          while ((c = copy_once (master, out)) == 1)
            ;
          if (c == 0)
            done = true; /* every slave closed */
        }
      if (n > 0 && in_open && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          int c = copy_once (in, master);
          if (c == 0 || c == -2)
            in_open = false; /* runc's behaviour: the terminal stays open */
        }
      if (n > 0 && (p[1].revents & POLLIN))
        {
          struct signalfd_siginfo si;
          while (read (sfd, &si, sizeof si) == (ssize_t)sizeof si)
            if (si.ssi_signo == SIGWINCH)
              copy_size (size_src, master);
            else if (si.ssi_signo != SIGCHLD)
              (void)kill (pid, (int)si.ssi_signo);
        }
      if (!done && exited (pid))
        {
          /* What it wrote before it exited is still in the terminal. */
          while (copy_once (master, out) == 1)
            ;
          done = true;
        }
    }
  if (raw)
    (void)tcsetattr (in, TCSANOW, &saved_tio);
  sigprocmask (SIG_SETMASK, &old, NULL);
  return r;
}
