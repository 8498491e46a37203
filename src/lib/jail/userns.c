/* csrun — a process in a new user namespace with a jail's maps (userns.h). */
#include "config.h"
#include "userns.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "idmap.h"

__attribute__ ((noreturn)) static void
child (int to_parent, int from_parent, int (*fn) (void *), void *arg)
{
  char c = 0;
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (unshare (CLONE_NEWUSER) < 0)
    {
      dprintf (2, "csrun: new user namespace: %m\n");
      _exit (125);
    }
  if (write (to_parent, &c, 1) != 1)
    _exit (125);
  close (to_parent);
  /* The maps are written when the parent says so (or it failed: EOF). */
  if (read (from_parent, &c, 1) != 1)
    _exit (125);
  close (from_parent);
  /* Dumpable until now: an unprivileged parent writes the maps through
   * /proc/PID, which a non-dumpable process's are not open to. */
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* setgroups is denied when an unprivileged parent wrote the maps. */
  if (setgroups (0, NULL) < 0 && errno != EPERM)
    {
      dprintf (2, "csrun: setgroups in the user namespace: %m\n");
      _exit (125);
    }
  if (setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
    {
      dprintf (2, "csrun: become root of the user namespace: %m\n");
      _exit (125);
    }
  _exit (fn (arg) & 0xff);
}

pid_t
csr_userns_fork (const struct jail_spec *spec, int (*fn) (void *), void *arg, csr_error **err)
{
  int up[2], down[2];
  if (pipe2 (up, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  if (pipe2 (down, O_CLOEXEC) < 0)
    {
      close (up[0]);
      close (up[1]);
      return csr_error_errno (err, "pipe");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (up[0]);
      close (down[1]);
      child (up[1], down[0], fn, arg);
    }
  int saved = errno;
  close (up[1]);
  close (down[0]);
  char c;
  ssize_t r = -1;
  if (pid > 0)
    while ((r = read (up[0], &c, 1)) < 0 && errno == EINTR)
      ;
  close (up[0]);
  if (pid < 0 || r != 1 || csr_idmap_write (pid, spec, err) < 0 || write (down[1], &c, 1) != 1)
    {
      close (down[1]);
      if (pid < 0)
        {
          errno = saved;
          return csr_error_errno (err, "fork");
        }
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      return csr_error_set (err, 0, "could not make a user namespace with the sandbox's id maps");
    }
  close (down[1]);
  return pid;
}
