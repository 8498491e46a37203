#include "config.h"
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/syscalls.h"
#include "child.h"

void
csr_init_run (int syncfd, void (*start_payload) (void *arg, int syncfd, const sigset_t *oldmask),
              void *arg)
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
  pid_t payload = fork ();
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
  char c;
  while (read (execpipe[0], &c, 1) < 0 && errno == EINTR)
    ;
  close (execpipe[0]);
  csr_sync_send (syncfd, CSR_SYNC_READY, 0, NULL);

  /* Init keeps nothing of the supervisor's: not its stdio, not the payload's pipes. */
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd < 3 && devnull >= 0; fd++)
    dup2 (devnull, fd);
  if (syncfd > 3)
    csr_close_range_between (3, (unsigned)syncfd - 1);
  csr_close_range_between ((unsigned)syncfd + 1, ~0U);

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
              /* The payload is done: report it and leave; the kernel kills
               * whatever it left behind in the pid namespace. */
              csr_sync_send (syncfd, CSR_SYNC_EXIT, status, NULL);
              _exit (0);
            }
        }
    }
}
