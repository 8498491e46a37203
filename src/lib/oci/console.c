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
#include "../util/fdpass.h"
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

/* Copy what MASTER has to *OUT: 1 something was read, 0 end (EOF, or EIO:
 * no slave is open any more), -1 nothing now.  Once *OUT fails (a closed
 * pipe) it becomes -1 and the terminal is still drained, into nothing, so
 * the process never blocks on a full terminal. */
static int
drain_master (int master, int *out)
{
  char buf[8192];
  ssize_t n = read (master, buf, sizeof buf);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR ? -1 : 0;
  if (n == 0)
    return 0;
  if (*out >= 0 && csr_write_all (*out, buf, (size_t)n, NULL) < 0)
    *out = -1;
  return 1;
}

/* Input on its way to the terminal: MASTER is non-blocking, so what it
 * can't take now waits here (and IN is not read meanwhile) while the
 * output keeps flowing. */
struct pending
{
  char buf[4096];
  size_t off, len;
};

/* Write what is pending: false when MASTER failed (the input is dropped). */
static bool
flush_pending (struct pending *p, int master)
{
  while (p->off < p->len)
    {
      ssize_t n = write (master, p->buf + p->off, p->len - p->off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return true;
      if (n <= 0)
        return false;
      p->off += (size_t)n;
    }
  p->off = p->len = 0;
  return true;
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
  sigaddset (&set, SIGPIPE); /* a closed stdout is EPIPE, read and dropped below */
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
  struct pending pend = { .off = 0, .len = 0 };
  int r = 0;
  while (!done)
    {
      bool waiting = pend.len > pend.off;
      struct pollfd p[3] = { { master, (short)(POLLIN | (waiting ? POLLOUT : 0)), 0 },
                             { sfd, POLLIN, 0 },
                             { in, POLLIN, 0 } };
      /* The timeout only re-checks the child (its SIGCHLD may predate the mask). */
      int n = poll (p, in_open && !waiting ? 3 : 2, 500);
      if (n < 0 && errno != EINTR)
        {
          r = csr_error_errno (err, "terminal: poll");
          break;
        }
      if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          int c;
          while ((c = drain_master (master, &out)) == 1)
            ;
          if (c == 0)
            done = true; /* every slave closed */
        }
      if (n > 0 && waiting && (p[0].revents & POLLOUT) && !flush_pending (&pend, master))
        in_open = false, pend.off = pend.len = 0;
      if (n > 0 && in_open && !waiting && (p[2].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          ssize_t k = read (in, pend.buf, sizeof pend.buf);
          if (k < 0 && (errno == EINTR || errno == EAGAIN))
            k = -2;
          if (k == 0 || k == -1)
            in_open = false; /* runc's behaviour: the terminal stays open */
          else if (k > 0)
            {
              pend.off = 0;
              pend.len = (size_t)k;
              if (!flush_pending (&pend, master))
                in_open = false, pend.off = pend.len = 0;
            }
        }
      if (n > 0 && (p[1].revents & POLLIN))
        {
          struct signalfd_siginfo si;
          while (read (sfd, &si, sizeof si) == (ssize_t)sizeof si)
            if (si.ssi_signo == SIGWINCH)
              copy_size (size_src, master);
            else if (si.ssi_signo != SIGCHLD && si.ssi_signo != SIGPIPE)
              (void)kill (pid, (int)si.ssi_signo);
        }
      if (!done && exited (pid))
        {
          /* What it wrote before it exited is still in the terminal. */
          while (drain_master (master, &out) == 1)
            ;
          done = true;
        }
    }
  if (raw)
    (void)tcsetattr (in, TCSANOW, &saved_tio);
  /* What is still pending must not hit us once unblocked (a SIGPIPE from a
   * reader that went away would kill csrun before it reports the status). */
  struct signalfd_siginfo si;
  while (read (sfd, &si, sizeof si) == (ssize_t)sizeof si)
    ;
  sigprocmask (SIG_SETMASK, &old, NULL);
  return r;
}
