/* csrun — exec into a running sandbox (see exec.h). */
#include "config.h"
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
#include "../cgroup/subcgroup.h"
#include "../jail/caps.h"
#include "../jail/enter.h"
#include "../jail/rlimit.h"
#include "../util/syscalls.h"
#include "layer.h"

extern char **environ;

#define FD_HIGH 64

static void
rec (int fd, char type, int32_t value)
{
  struct csr_sbx_rec r = { type, value };
  if (write (fd, &r, sizeof r) != (ssize_t)sizeof r)
    _exit (125);
}

__attribute__ ((noreturn)) static void
fail (int st, int code, const char *what, csr_error *e)
{
  dprintf (2, "csrun: sandbox exec: %s%s%s\n", what, e ? ": " : "", e ? csr_error_text (e) : "");
  rec (st, 'F', code);
  _exit (code);
}

/* The process, in the sandbox's namespaces (forked after the join). */
__attribute__ ((noreturn)) static void
process (const struct jail_snippet *sn, const struct csr_sbx_exec_req *r, int st)
{
  csr_error *e = NULL;
  struct sigaction dfl = { .sa_handler = SIG_DFL };
  for (int s = 1; s < NSIG; s++)
    sigaction (s, &dfl, NULL);
  sigset_t none;
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  if (setsid () < 0)
    fail (st, 125, "setsid", NULL);
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* The streams and the extra descriptors to fds 0, 1, 2, 3, ...: through
   * copies above them all first, so that none is overwritten. */
  int high[3 + CSR_SBX_MAX_EXTRA_FDS];
  size_t n = 3 + r->n_extra;
  for (size_t i = 0; i < n; i++)
    {
      int src = i < 3 ? r->fds[i] : r->extra[i - 3];
      high[i] = src < 0 ? -1 : fcntl (src, F_DUPFD_CLOEXEC, FD_HIGH);
      if (src >= 0 && high[i] < 0)
        fail (st, 125, "prepare the standard streams", NULL);
    }
  for (size_t i = 0; i < n; i++)
    if (high[i] >= 0 ? dup2 (high[i], (int)i) < 0 : (close ((int)i), false))
      fail (st, 125, "dup2", NULL);
  /* exec -t: the terminal (the caller's pty) becomes the controlling one
   * of this session, whose process group is then its foreground. */
  if (r->tty && ioctl (0, TIOCSCTTY, 0) < 0)
    {
      csr_error_errno (&e, "TIOCSCTTY");
      fail (st, 125, "make the terminal the controlling one", e);
    }
  if (chdir (r->cwd) < 0)
    {
      csr_error_errno (&e, "%s", r->cwd);
      fail (st, 125, "working directory", e);
    }
  if (csr_rlimits_apply (sn, &e) < 0)
    fail (st, 125, "rlimits", e);
  if (csr_caps_drop_all (r->uid, r->gid, &e) < 0)
    fail (st, 125, "user (--user must be an id this sandbox maps; without subordinate ids only 0)",
          e);
  /* Nothing but 0, 1, 2, the extra fds and the status pipe (close-on-exec) goes on. */
  csr_close_range_between ((unsigned)n, (unsigned)st - 1);
  csr_close_range_between ((unsigned)st + 1, ~0U);
  const void *bpf = sn->jail.seccomp_bpf;
  if (bpf && prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, bpf) < 0)
    fail (st, 125, "load the seccomp filter", NULL);
  environ = r->envp;
  execvp (r->argv[0], r->argv);
  int saved = errno;
  dprintf (2, "csrun: sandbox exec: %s: %s\n", r->argv[0], strerror (saved));
  rec (st, 'E', saved);
  _exit (saved == ENOENT ? 127 : 126);
}

int
csr_sbx_join (const struct csr_sbx_target *t, unsigned what, csr_error **err)
{
  if ((what & CSR_SBX_JOIN_CGROUP) && t->n_cg
      && (t->cg_self ? csr_cgroup_self_enter (t->cg_fds, (int)t->n_cg, err)
                     : csr_cgroup_exec_join (t->cg_fds, t->n_cg, getpid (), err))
             < 0)
    return csr_error_wrap (err, "join the sandbox's cgroup");
  /* The namespaces the holder handed over (layer.h): the jail's init is
   * not dumpable, so its /proc/PID/ns can't be opened by an unprivileged
   * keeper; without them, by path (jail/enter.c). */
  if (t->ns_fds && t->ns_fds[0] >= 0)
    {
      for (int i = 0; i < CSR_SANDBOX_N_NS; i++)
        if ((what & (1u << i)) && !(t->sn->host_net && strcmp (csr_sandbox_ns_names[i], "net") == 0)
            && setns (t->ns_fds[i], 0) < 0)
          return csr_error_errno (err, "join the sandbox's %s namespace", csr_sandbox_ns_names[i]);
      return 0;
    }
  if ((what & 0x7f) != 0x7f)
    return csr_error_set (err, EINVAL, "the sandbox's namespaces are not known");
  struct csr_enter en;
  csr_enter_init (&en);
  int rc = csr_enter_open (&en, t->init_pid, err);
  if (rc == 0)
    rc = csr_enter_join (&en, err);
  csr_enter_release (&en);
  return rc;
}

pid_t
csr_sbx_fork_in (const struct csr_sbx_target *t, unsigned what, int (*fn) (void *), void *arg,
                 csr_error **err)
{
  pid_t pid = fork ();
  if (pid < 0)
    return csr_error_errno (err, "fork");
  if (pid > 0)
    return pid;
  csr_error *e = NULL;
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  if (csr_sbx_join (t, what, &e) < 0)
    {
      dprintf (2, "csrun: sandbox: %s\n", csr_error_text (e));
      _exit (125);
    }
  _exit (fn (arg) & 0xff);
}

/* The helper: outside, in the sandbox's cgroup, joins its namespaces, forks
 * the process and waits for it. */
__attribute__ ((noreturn)) static void
helper (const struct csr_sbx_target *t, const struct csr_sbx_exec_req *r, int st)
{
  csr_error *e = NULL;
  prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  /* Our messages go to the caller. */
  if (dup2 (r->fds[2], 2) < 0)
    _exit (125);
  if (csr_sbx_join (t, CSR_SBX_JOIN_ALL, &e) < 0)
    fail (st, 125, "enter the sandbox", e);
  /* Nothing of the keeper's (its control socket, forwarded connections,
   * other execs' descriptors) stays open here: only the streams, the extra
   * descriptors (issue 15) and the status pipe. */
  int keep[4 + CSR_SBX_MAX_EXTRA_FDS] = { r->fds[0], r->fds[1], r->fds[2], st };
  size_t n_keep = 4;
  for (size_t i = 0; i < r->n_extra; i++)
    if (r->extra[i] >= 0)
      keep[n_keep++] = r->extra[i];
  csr_close_all_but (keep, n_keep);
  pid_t pid = fork ();
  if (pid < 0)
    fail (st, 125, "fork", NULL);
  if (pid == 0)
    process (t->sn, r, st);
  rec (st, 'P', pid);
  for (int i = 0; i < 3; i++)
    close (r->fds[i]);
  for (size_t i = 0; i < r->n_extra; i++)
    if (r->extra[i] >= 0)
      close (r->extra[i]);
  int status;
  struct rusage ru;
  while (wait4 (pid, &status, 0, &ru) < 0)
    if (errno != EINTR)
      _exit (125);
  uint64_t cpu_ms = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000
                    + ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) / 1000;
  rec (st, 'C', cpu_ms > INT32_MAX ? INT32_MAX : (int32_t)cpu_ms);
  rec (st, 'M', ru.ru_maxrss > INT32_MAX ? INT32_MAX : (int32_t)ru.ru_maxrss);
  rec (st, 'S', status);
  _exit (0);
}

int
csr_sbx_exec_spawn (const struct csr_sbx_target *t, const struct csr_sbx_exec_req *r,
                    struct csr_sbx_exec *x, csr_error **err)
{
  memset (x, 0, sizeof *x);
  x->status_fd = -1;
  x->cpu_ms = x->maxrss_kib = -1;
  if (r->n_extra > CSR_SBX_MAX_EXTRA_FDS)
    return csr_error_set (err, E2BIG, "at most %d extra descriptors", CSR_SBX_MAX_EXTRA_FDS);
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  /* Above the descriptors the process gets. */
  int st = fcntl (p[1], F_DUPFD_CLOEXEC, FD_HIGH + 8);
  close (p[1]);
  if (st < 0)
    {
      close (p[0]);
      return csr_error_errno (err, "dup");
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      close (p[0]);
      helper (t, r, st);
    }
  int saved = errno;
  close (st);
  if (pid < 0)
    {
      close (p[0]);
      errno = saved;
      return csr_error_errno (err, "fork");
    }
  fcntl (p[0], F_SETFL, O_NONBLOCK);
  x->helper = pid;
  x->status_fd = p[0];
  return 0;
}

int
csr_sbx_exec_poll (struct csr_sbx_exec *x)
{
  struct csr_sbx_rec r;
  ssize_t n;
  while ((n = read (x->status_fd, &r, sizeof r)) == (ssize_t)sizeof r)
    switch (r.type)
      {
      case 'P':
        x->pid = (pid_t)r.value;
        break;
      case 'S':
        x->have_status = true;
        x->status = r.value;
        break;
      case 'C':
        x->cpu_ms = r.value;
        break;
      case 'M':
        x->maxrss_kib = r.value;
        break;
      case 'E':
        x->exec_failed = true;
        x->exec_errno = r.value;
        break;
      case 'F':
        x->setup_failed = true;
        x->status = r.value << 8; /* as an exit status */
        x->have_status = true;
        break;
      default:
        break;
      }
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return 0;
  /* End of file: the helper is gone. */
  close (x->status_fd);
  x->status_fd = -1;
  int st;
  while (waitpid (x->helper, &st, 0) < 0 && errno == EINTR)
    ;
  x->helper = 0;
  if (!x->have_status)
    {
      x->have_status = true;
      x->status = WIFSIGNALED (st) ? st : 125 << 8;
    }
  return 1;
}

void
csr_sbx_exec_kill (struct csr_sbx_exec *x)
{
  if (x->pid > 0)
    {
      kill (-x->pid, SIGKILL);
      kill (x->pid, SIGKILL);
    }
  else if (x->helper > 0)
    kill (x->helper, SIGKILL);
}
