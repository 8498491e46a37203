#include "config.h"
#include "hooks.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/syscalls.h"

#define DEFAULT_HOOK_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static int
run_one (const struct oci_hook *h, const char *stage, const char *state, csr_error **err)
{
  int in[2];
  if (pipe2 (in, O_CLOEXEC) < 0)
    return csr_error_errno (err, "%s hook %s: pipe", stage, h->path);
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (in[0]);
      close (in[1]);
      return csr_error_errno (err, "%s hook %s: fork", stage, h->path);
    }
  if (pid == 0)
    {
      if (dup2 (in[0], 0) < 0)
        _exit (127);
      char *argv0[] = { h->path, NULL };
      /* A hook without env gets the runtime's PATH, nothing else (runc and
       * crun pass their whole environment: not csrun's API keys). */
      char path_env[4096];
      const char *path = getenv ("PATH");
      snprintf (path_env, sizeof path_env, "PATH=%s",
                path && strlen (path) < sizeof path_env - 6 ? path : DEFAULT_HOOK_PATH);
      char *envp0[] = { path_env, NULL };
      signal (SIGPIPE, SIG_DFL);
      execve (h->path, h->n_args ? h->args : argv0, h->n_env ? h->env : envp0);
      _exit (127);
    }
  close (in[0]);
  /* The hook may not read its stdin: ignore EPIPE. */
  struct sigaction ign = { .sa_handler = SIG_IGN }, old;
  sigaction (SIGPIPE, &ign, &old);
  size_t len = strlen (state), off = 0;
  while (off < len)
    {
      ssize_t w = write (in[1], state + off, len - off);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        break;
      off += (size_t)w;
    }
  close (in[1]);
  sigaction (SIGPIPE, &old, NULL);

  int pidfd = csr_pidfd_open (pid);
  int status = 0;
  bool timed_out = false;
  if (h->timeout_s > 0 && pidfd >= 0)
    {
      struct pollfd p = { .fd = pidfd, .events = POLLIN };
      int n;
      while ((n = poll (&p, 1, h->timeout_s * 1000)) < 0 && errno == EINTR)
        ;
      if (n == 0)
        {
          timed_out = true;
          kill (pid, SIGKILL);
        }
    }
  if (pidfd >= 0)
    close (pidfd);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return csr_error_errno (err, "%s hook %s: wait", stage, h->path);
  if (timed_out)
    return csr_error_set (err, ETIMEDOUT, "error running hook (%s) %s: timed out after %d s", stage,
                          h->path, h->timeout_s);
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return 0;
  if (WIFEXITED (status))
    return csr_error_set (err, 0, "error running hook (%s) %s: exit status %d", stage, h->path,
                          WEXITSTATUS (status));
  /* "bad system call", as runc words it (a seccomp kill, say). */
  char name[64];
  snprintf (name, sizeof name, "%s", strsignal (WTERMSIG (status)));
  name[0] = (char)tolower ((unsigned char)name[0]);
  return csr_error_set (err, 0, "error running hook (%s) %s: killed by signal %d: %s", stage,
                        h->path, WTERMSIG (status), name);
}

int
oci_hooks_run (const struct oci_config *c, int stage, const char *state_json, csr_error **err)
{
  for (size_t i = 0; i < c->n_hooks[stage]; i++)
    if (run_one (&c->hooks[stage][i], oci_hook_stage_name (stage), state_json ? state_json : "{}",
                 err)
        < 0)
      return -1;
  return 0;
}
