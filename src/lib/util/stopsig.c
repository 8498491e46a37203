/* csrun — the stop signals as bytes on a pipe (see stopsig.h). */
#include "config.h"
#include "stopsig.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

static int stop_pipe[2] = { -1, -1 };

int
csr_stopsig_open (csr_error **err)
{
  if (pipe2 (stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
    {
      int saved = errno;
      stop_pipe[0] = stop_pipe[1] = -1;
      csr_error_errno (err, "pipe");
      errno = saved;
      return -1;
    }
  return stop_pipe[0];
}

int
csr_stopsig_fd (void)
{
  return stop_pipe[0];
}

void
csr_stopsig_note (int sig)
{
  int saved = errno;
  unsigned char b = (unsigned char)sig;
  if (stop_pipe[1] >= 0 && write (stop_pipe[1], &b, 1) < 0)
    {
      /* full: a stop is pending already */
    }
  errno = saved;
}

void
csr_stopsig_set (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGHUP);
}

void
csr_stopsig_catch (void (*handler) (int))
{
  struct sigaction sa
      = { .sa_handler = handler ? handler : csr_stopsig_note, .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  sigaction (SIGINT, &sa, NULL);
  sigaction (SIGTERM, &sa, NULL);
  sigaction (SIGHUP, &sa, NULL);
}

int
csr_stopsig_take (void)
{
  unsigned char sig = 0;
  if (stop_pipe[0] < 0 || read (stop_pipe[0], &sig, 1) != 1)
    return 0;
  return sig;
}

void
csr_stopsig_close (void)
{
  for (int i = 0; i < 2; i++)
    if (stop_pipe[i] >= 0)
      {
        close (stop_pipe[i]);
        stop_pipe[i] = -1;
      }
}
