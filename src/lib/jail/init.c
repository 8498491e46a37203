#include "config.h"
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/syscalls.h"
#include "launch.h"

/* Overwrite the memory /proc/self/cmdline shows (arg_start..arg_end in
 * /proc/self/stat, fields 48 and 49) with "csrun-init". */
static void
hide_cmdline (void)
{
  char buf[2048];
  int fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  ssize_t n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return;
  buf[n] = '\0';
  /* Fields after the command name, which may contain spaces: start after ')'. */
  char *p = strrchr (buf, ')');
  if (p == NULL)
    return;
  unsigned long start = 0, end = 0;
  int field = 2;
  for (char *tok = strtok (p + 1, " "); tok; tok = strtok (NULL, " "))
    {
      field++;
      if (field == 48)
        start = strtoul (tok, NULL, 10);
      else if (field == 49)
        {
          end = strtoul (tok, NULL, 10);
          break;
        }
    }
  if (start == 0 || end <= start || end - start > (1UL << 24))
    return;
  static const char name[] = "csrun-init";
  memset ((void *)start, 0, end - start);
  memcpy ((void *)start, name, end - start < sizeof name ? end - start - 1 : sizeof name - 1);
}

void
csr_init_run (int syncfd, void (*start_payload) (void *arg, int syncfd, const sigset_t *oldmask),
              void *arg, const struct csr_init_exit *at_exit, bool execs)
{
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);

  /* The payload closes the write end of this pipe by exec'ing (O_CLOEXEC). */
  int execpipe[2];
  if (pipe2 (execpipe, O_CLOEXEC) < 0)
    {
      csr_error e = { errno, (char *)"init: pipe" };
      csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, &e);
      _exit (125);
    }
  pid_t payload;
  if (execs)
    payload = vfork ();
  else
    payload = fork ();
  if (payload < 0)
    {
      csr_error e = { errno, (char *)"init: fork the payload" };
      csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, &e);
      _exit (125);
    }
  if (payload == 0)
    {
      close (execpipe[0]);
      start_payload (arg, syncfd, &old);
      _exit (127);
    }
  close (execpipe[1]);
  /* Init is a copy of csrun: nothing of it may be readable from the jail.
   * Not dumpable: its /proc entries belong to the host's root, not to the
   * snippet's uid; and its command line (csrun's, with host paths and maybe
   * a --patch-cmd holding a secret) is wiped — only now, after the fork:
   * the payload's argv and environment point into that memory. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  hide_cmdline ();
  char c;
  while (read (execpipe[0], &c, 1) < 0 && errno == EINTR)
    ;
  close (execpipe[0]);
  csr_sync_send (syncfd, CSR_SYNC_READY, 0, NULL);

  /* Init keeps nothing of the supervisor's: not its stdio, not the payload's
   * pipes; only the sync socket and AT_EXIT's fd (moved above 2 first). */
  int keep = at_exit && at_exit->fd >= 0 ? fcntl (at_exit->fd, F_DUPFD_CLOEXEC, 3) : -1;
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && devnull >= 0; fd++)
    dup2 (devnull, fd);
  {
    unsigned lo = (unsigned)syncfd, hi = (unsigned)syncfd;
    if (keep >= 0)
      {
        lo = (unsigned)keep < lo ? (unsigned)keep : lo;
        hi = (unsigned)keep > hi ? (unsigned)keep : hi;
      }
    if (lo > 3)
      csr_close_range_between (3, lo - 1);
    if (hi > lo + 1)
      csr_close_range_between (lo + 1, hi - 1);
    csr_close_range_between (hi + 1, ~0U);
  }

  /* Reap every process of the namespace; forward signals to the payload. */
  for (;;)
    {
      siginfo_t si;
      int sig = sigwaitinfo (&all, &si);
      if (sig < 0)
        continue;
      if (sig != SIGCHLD)
        {
          kill (payload, sig);
          continue;
        }
      for (;;)
        {
          int status;
          pid_t p = waitpid (-1, &status, WNOHANG);
          if (p <= 0)
            break;
          if (p == payload)
            {
              /* The payload is done.  Kill and reap what it left behind
               * first, so their cpu time is in init's rusage, then report. */
              kill (-1, SIGKILL);
              int st;
              while (waitpid (-1, &st, 0) > 0 || errno == EINTR)
                ;
              if (keep >= 0 && at_exit->fn)
                at_exit->fn (at_exit->arg, keep);
              csr_sync_send (syncfd, CSR_SYNC_EXIT, status, NULL);
              _exit (0);
            }
        }
    }
}
