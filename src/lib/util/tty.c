/* csrun — pseudo-terminals and the relay to the caller's terminal (see
 * tty.h).  The runtime spec leaves it to the runtime how a terminal
 * reaches the user without --console-socket; runc and crun, in the
 * foreground, keep the master and copy between it and their own stdio. */
#include "config.h"
#include "tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>
#include <unistd.h>

#include "cleanup.h"
#include "fs.h"
#include "syscalls.h"

int
csr_pty_open (int *master, int *slave, char *name, size_t namesz, csr_error **err)
{
  *master = *slave = -1;
  cleanup_close int m = open ("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0)
    return csr_error_errno (err, "open /dev/ptmx");
  if (unlockpt (m) < 0 || ptsname_r (m, name, namesz) != 0)
    return csr_error_errno (err, "prepare the terminal");
  int s = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0)
    return csr_error_errno (err, "open %s", name);
  *master = steal_fd (&m);
  *slave = s;
  return 0;
}

void
csr_tty_copy_size (int from, int to)
{
  struct winsize ws;
  if (ioctl (from, TIOCGWINSZ, &ws) == 0 && (ws.ws_row || ws.ws_col))
    (void)ioctl (to, TIOCSWINSZ, &ws);
}

/* Copy what MASTER has to *OUT: 1 something was read, 0 end (EOF, or EIO:
 * no slave is open any more), -1 nothing now.  Once *OUT fails (a closed
 * pipe) it becomes -1 and the terminal is still drained, into nothing, so
 * the process never blocks on a full terminal.  (A read flushes the
 * terminal's pending input first: what an exited process wrote is there.) */
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

/* A signal from SFD: forwarded to the child, or the end of an END_FD relay. */
static bool
on_signal (struct csr_tty_relay *r, const struct signalfd_siginfo *si, int size_src)
{
  int sig = (int)si->ssi_signo;
  if (sig == SIGWINCH)
    csr_tty_copy_size (size_src, r->master);
  else if (sig == SIGCHLD || sig == SIGPIPE)
    ;
  else if (r->pid > 0)
    (void)kill (r->pid, sig);
  else if (sig != SIGUSR1 && sig != SIGUSR2)
    {
      r->stopped_by = sig;
      return true;
    }
  return false;
}

/* The relay's own state. */
struct relay_state
{
  int sfd, size_src, out;
  bool in_open;
  char last; /* the last byte of input written */
  struct pending pend;
};

/* IN ended: the terminal's VEOF once at the start of a line (after a
 * partial line, the first one only ends the line), or nothing. */
static void
input_ended (struct csr_tty_relay *r, struct relay_state *st)
{
  st->in_open = false;
  struct termios tio;
  if (!r->eof_to_master || tcgetattr (r->master, &tio) < 0 || tio.c_cc[VEOF] == _POSIX_VDISABLE)
    return;
  char eof[2] = { (char)tio.c_cc[VEOF], (char)tio.c_cc[VEOF] };
  size_t n = st->last == '\0' || st->last == '\n' || st->last == '\r' ? 1 : 2;
  memcpy (st->pend.buf, eof, n);
  st->pend.off = 0;
  st->pend.len = n;
  if (!flush_pending (&st->pend, r->master))
    st->pend.off = st->pend.len = 0;
}

/* Until the relay is over (tty.h). */
static int
relay_loop (struct csr_tty_relay *r, struct relay_state *st, csr_error **err)
{
  bool done = false;
  while (!done)
    {
      bool waiting = st->pend.len > st->pend.off;
      struct pollfd p[4] = { { r->master, (short)(POLLIN | (waiting ? POLLOUT : 0)), 0 },
                             { st->sfd, POLLIN, 0 },
                             { r->end_fd, POLLIN, 0 },
                             { st->in_open && !waiting ? r->in : -1, POLLIN, 0 } };
      /* The timeout only re-checks the child (its SIGCHLD may predate the mask). */
      int n = poll (p, 4, r->pid > 0 ? 500 : -1);
      if (n < 0 && errno != EINTR)
        return csr_error_errno (err, "terminal: poll");
      if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          int c;
          while ((c = drain_master (r->master, &st->out)) == 1)
            ;
          if (c == 0)
            done = true; /* every slave closed */
        }
      if (n > 0 && waiting && (p[0].revents & POLLOUT) && !flush_pending (&st->pend, r->master))
        st->in_open = false, st->pend.off = st->pend.len = 0;
      if (n > 0 && (p[3].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          ssize_t k = read (r->in, st->pend.buf, sizeof st->pend.buf);
          if (k < 0 && (errno == EINTR || errno == EAGAIN))
            k = -2;
          if (k == 0 || k == -1)
            input_ended (r, st);
          else if (k > 0)
            {
              st->last = st->pend.buf[k - 1];
              st->pend.off = 0;
              st->pend.len = (size_t)k;
              if (!flush_pending (&st->pend, r->master))
                st->in_open = false, st->pend.off = st->pend.len = 0;
            }
        }
      if (n > 0 && (p[1].revents & POLLIN))
        {
          struct signalfd_siginfo si;
          while (read (st->sfd, &si, sizeof si) == (ssize_t)sizeof si)
            if (on_signal (r, &si, st->size_src))
              return 0;
        }
      bool ended
          = !done
            && ((r->pid > 0 && csr_child_exited (r->pid))
                || (n > 0 && r->end_fd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))));
      if (ended)
        {
          /* What it wrote before it ended is still in the terminal. */
          while (drain_master (r->master, &st->out) == 1)
            ;
          done = true;
        }
    }
  return 0;
}

int
csr_tty_relay (struct csr_tty_relay *r, csr_error **err)
{
  r->stopped_by = 0;
  sigset_t set, old;
  sigemptyset (&set);
  for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
    sigaddset (&set, forwarded[i]);
  sigaddset (&set, SIGWINCH);
  sigaddset (&set, SIGCHLD);
  sigaddset (&set, SIGPIPE); /* a closed stdout is EPIPE, read and dropped below */
  if (sigprocmask (SIG_BLOCK, &set, &old) < 0)
    return csr_error_errno (err, "terminal: sigprocmask");
  struct relay_state st = { .sfd = signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK),
                            .out = r->out,
                            .in_open = r->in >= 0 };
  if (st.sfd < 0)
    {
      int saved = errno;
      sigprocmask (SIG_SETMASK, &old, NULL);
      errno = saved;
      return csr_error_errno (err, "terminal: signalfd");
    }
  struct termios saved_tio;
  bool raw = r->in >= 0 && tcgetattr (r->in, &saved_tio) == 0;
  if (raw)
    {
      struct termios tio = saved_tio;
      cfmakeraw (&tio);
      raw = tcsetattr (r->in, TCSANOW, &tio) == 0;
    }
  st.size_src = r->in >= 0 && isatty (r->in) ? r->in : r->out;
  csr_tty_copy_size (st.size_src, r->master);
  int flags = fcntl (r->master, F_GETFL);
  if (flags >= 0)
    (void)fcntl (r->master, F_SETFL, flags | O_NONBLOCK);
  int rc = relay_loop (r, &st, err);
  if (raw)
    (void)tcsetattr (r->in, TCSANOW, &saved_tio);
  /* What is still pending must not hit us once unblocked (a SIGPIPE from a
   * reader that went away would kill csrun before it reports the status). */
  struct signalfd_siginfo si;
  while (read (st.sfd, &si, sizeof si) == (ssize_t)sizeof si)
    ;
  close (st.sfd);
  sigprocmask (SIG_SETMASK, &old, NULL);
  return rc;
}
