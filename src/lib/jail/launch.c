/* csrun — the launcher (see launch.h): the one clone / id maps / go /
 * wait-for-ready / reap sequence the snippet jail and the OCI container
 * share. */
#include "config.h"
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fdpass.h"
#include "../util/syscalls.h"
#include "../cgroup/cgroup.h"
#include "idmap.h"

void
csr_sync_send (int fd, uint32_t type, int status, const csr_error *e)
{
  struct csr_sync_msg m;
  memset (&m, 0, sizeof m);
  m.type = type;
  m.status = status;
  if (e)
    {
      m.err = e->status;
      snprintf (m.text, sizeof m.text, "%s", e->msg ? e->msg : "unknown error");
    }
  while (send (fd, &m, sizeof m, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

void
csr_launch_fail (int syncfd, csr_error *e)
{
  csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, e);
  _exit (125);
}

void
csr_launch_wait_byte (int syncfd, char want)
{
  char b;
  ssize_t r;
  while ((r = read (syncfd, &b, 1)) < 0 && errno == EINTR)
    ;
  if (r != 1 || b != want)
    _exit (125);
}

/* ---- the cgroup step: one place, written against cgroup.h's four calls.
 * v2: the child is cloned into the directory (no migration); v1: the child
 * writes 0 to "tasks" files opened here (a task moving only itself skips
 * the kernel's global lock); a hybrid host's container has both.  What is
 * left (a clone3 without CLONE_INTO_CGROUP, a tasks file we could not open)
 * is done from outside after the clone. */
#define LAUNCH_CG_MAX 16 /* >= CSR_CG_V1_N and CSR_CG_MAX_DIRS */

struct launch_cg
{
  bool any;     /* there is a cgroup to be in */
  int clone_fd; /* v2 directory to clone into (the handle's), or -1 */
  bool want_v2; /* there is a v2 directory (clone_fd, unless it could not be opened) */
  bool want_v1; /* there are v1 directories */
  int fds[LAUNCH_CG_MAX];
  int n_fds; /* tasks fds the child writes (0: none, or the parent moves it) */
  bool in;   /* after the clone: in every directory, or will be by itself */
};

static void
cgroup_prepare (const struct csr_launch *l, struct launch_cg *cg)
{
  *cg = (struct launch_cg){ .clone_fd = -1 };
  const struct csr_cgroup *g = l->spec->cgroup;
  if (g == NULL)
    return;
  cg->any = true;
  cg->clone_fd = csr_cgroup_clone_fd (g);
  cg->want_v2 = cg->clone_fd >= 0;
  int n = csr_cgroup_self_enter_fds (g, cg->fds, NULL);
  /* 0: no v1 directory; -1: there are, unopened (moved from outside). */
  cg->want_v1 = n != 0;
  cg->n_fds = n > 0 ? n : 0;
}

/* In the parent after the clone: drop the fds (also on failure). */
static void
cgroup_release (struct launch_cg *cg)
{
  cg->clone_fd = -1;
  while (cg->n_fds > 0)
    close (cg->fds[--cg->n_fds]);
}

/* Move PID from outside unless it is (or will put itself) everywhere. */
static int
cgroup_enter_after (const struct csr_launch *l, struct launch_cg *cg, pid_t pid, csr_error **err)
{
  cgroup_release (cg);
  if (!cg->any || cg->in)
    return 0;
  return csr_cgroup_enter (l->spec->cgroup, pid, err);
}

/* ---- the child side */

__attribute__ ((noreturn)) static void
child_run (const struct csr_launch *l, int syncfd, const int *cg_fds, int n_cg_fds, bool joined)
{
  csr_error *e = NULL;
  /* The id maps are written and the parent moved us if it had to. */
  csr_launch_wait_byte (syncfd, CSR_LAUNCH_GO);
  if (n_cg_fds > 0 && csr_cgroup_self_enter (cg_fds, n_cg_fds, &e) < 0)
    csr_launch_fail (syncfd, e);
  struct csr_launch_child lc = { .syncfd = syncfd, .joined = joined };
  l->entry (l->spec, l->face, &lc);
}

/* Joining a pid namespace only places the caller's children in it, and the
 * namespaces a joined user namespace should own must be made after joining
 * it: this process joins l->join (the user namespace first), unshares the
 * new ones, forks the entry's process and reports its pid before it exits. */
__attribute__ ((noreturn)) static void
via_intermediate (const struct csr_launch *l, int syncfd, const int *cg_fds, int n_cg_fds)
{
  csr_error *e = NULL;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < l->n_join; i++)
      {
        const struct csr_launch_ns *ns = &l->join[i];
        if ((pass == 0) != (ns->flag == CLONE_NEWUSER))
          continue;
        int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns (fd, ns->flag) < 0)
          {
            csr_error_errno (&e, "join namespace %s", ns->path);
            csr_launch_fail (syncfd, e);
          }
        close (fd);
      }
  if (!l->join_as_child && l->clone_flags && unshare ((int)l->clone_flags) < 0)
    {
      csr_error_errno (&e, "unshare the %s's namespaces", l->what);
      csr_launch_fail (syncfd, e);
    }
  pid_t pid = l->join_as_child ? csr_clone (l->clone_flags | CLONE_PARENT, NULL) : fork ();
  if (pid == 0)
    child_run (l, syncfd, cg_fds, n_cg_fds, true);
  if (pid < 0)
    {
      csr_error_errno (&e, "fork the %s's process", l->what);
      csr_launch_fail (syncfd, e);
    }
  csr_sync_send (syncfd, CSR_SYNC_PID, (int)pid, NULL);
  _exit (0);
}

/* ---- the parent side */

struct waiter
{
  const struct csr_launch *l;
  int timeout_ms;
  int64_t deadline;
};

/* One message before the deadline; a descriptor attached to it into *FD
 * (-1 when none). */
static int
read_msg (struct waiter *w, int syncfd, struct csr_sync_msg *m, int *fd, csr_error **err)
{
  *fd = -1;
  for (;;)
    {
      int64_t left = w->deadline - csr_mono_ms ();
      struct pollfd p = { .fd = syncfd, .events = POLLIN };
      int n = left > 0 ? poll (&p, 1, left > INT_MAX ? INT_MAX : (int)left) : 0;
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return csr_error_errno (err, "poll the %s's sync socket", w->l->what);
      if (n == 0)
        return csr_error_set (err, ETIMEDOUT, "%s set-up did not finish in %g s", w->l->what,
                              w->timeout_ms / 1000.0);
      ssize_t r = csr_recv_fd (syncfd, m, sizeof *m, fd);
      if (r < 0)
        return csr_error_errno (err, "read the %s's sync socket", w->l->what);
      if (r == 0)
        return csr_error_set (err, 0, "the %s died during set-up without saying why", w->l->what);
      if ((size_t)r != sizeof *m)
        {
          if (*fd >= 0)
            close (steal_fd (fd));
          return csr_error_set (err, 0, "short message on the %s's sync socket", w->l->what);
        }
      m->text[sizeof m->text - 1] = '\0';
      return 0;
    }
}

static int
relay_error (const struct csr_launch *l, const struct csr_sync_msg *m, csr_error **err)
{
  if (l->prefix_error)
    return csr_error_set (err, m->err, "%s set-up: %s", l->what, m->text);
  return csr_error_set (err, m->err, "%s", m->text);
}

/* The intermediate reports the entry process's pid, then exits. */
static int
await_pid (struct waiter *w, int syncfd, pid_t mid, pid_t *pid, csr_error **err)
{
  struct csr_sync_msg m;
  int fd;
  int rc = read_msg (w, syncfd, &m, &fd, err);
  while (waitpid (mid, NULL, 0) < 0 && errno == EINTR)
    ;
  if (fd >= 0)
    close (fd);
  if (rc < 0)
    return -1;
  if (m.type == CSR_SYNC_ERROR)
    return relay_error (w->l, &m, err);
  if (m.type != CSR_SYNC_PID || m.status <= 0)
    return csr_error_set (err, 0, "unexpected message %u from the %s", m.type, w->l->what);
  *pid = (pid_t)m.status;
  return 0;
}

/* Messages until READY; the time the face's steps take is not set-up's. */
static int
await_ready (struct waiter *w, int syncfd, pid_t pid, csr_error **err)
{
  const struct csr_launch *l = w->l;
  for (;;)
    {
      struct csr_sync_msg m;
      int fd;
      if (read_msg (w, syncfd, &m, &fd, err) < 0)
        return -1;
      if (m.type == CSR_SYNC_READY || m.type == CSR_SYNC_ERROR)
        {
          if (fd >= 0)
            close (fd);
          return m.type == CSR_SYNC_READY ? 0 : relay_error (l, &m, err);
        }
      if (l->on_message == NULL)
        {
          if (fd >= 0)
            close (fd);
          return csr_error_set (err, 0, "unexpected message %u from the %s", m.type, l->what);
        }
      int64_t t0 = csr_mono_ms ();
      if (l->on_message (l->face, pid, syncfd, &m, fd, err) < 0)
        return -1;
      w->deadline += csr_mono_ms () - t0;
    }
}

static void
reap_failed (pid_t pid, int pidfd)
{
  if (pidfd >= 0)
    csr_pidfd_send_signal (pidfd, SIGKILL);
  else
    kill (pid, SIGKILL);
  /* Not our child when an intermediate forked it (ECHILD): killed only. */
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

/* In the cgroup: (no v2 directory or cloned into it) and (no v1
 * directories or their tasks fds are open for the child). */
static pid_t
clone_child (const struct csr_launch *l, struct launch_cg *cg, int *pidfd)
{
  uint64_t flags = l->n_join ? 0 : l->clone_flags;
  pid_t pid = cg->clone_fd >= 0 ? csr_clone_into (flags, cg->clone_fd, pidfd) : -1;
  cg->in = (!cg->want_v2 || pid >= 0) && (!cg->want_v1 || cg->n_fds > 0);
  if (pid < 0)
    pid = csr_clone (flags, pidfd);
  return pid;
}

int
csr_launch (const struct csr_launch *l, struct csr_launched *out, csr_error **err)
{
  out->pid = -1;
  out->pidfd = out->syncfd = -1;
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  cleanup_close int parent_end = sv[0];
  cleanup_close int child_end = sv[1];
  struct launch_cg cg;
  cgroup_prepare (l, &cg);
  int pidfd = -1;
  pid_t pid = clone_child (l, &cg, &pidfd);
  if (pid == 0)
    {
      close (parent_end);
      if (l->n_join)
        via_intermediate (l, child_end, cg.fds, cg.n_fds);
      child_run (l, child_end, cg.fds, cg.n_fds, false);
    }
  int clone_errno = errno;
  close (steal_fd (&child_end));
  if (pid < 0)
    {
      cgroup_release (&cg);
      errno = clone_errno;
      if (l->write_idmaps && (errno == EPERM || errno == ENOSPC || errno == EUSERS))
        return csr_error_errno (err,
                                "create the %s's namespaces (are unprivileged user "
                                "namespaces enabled? see user.max_user_namespaces)",
                                l->what);
      return csr_error_errno (err, "clone the %s", l->what);
    }
  int timeout = l->timeout_ms > 0 ? l->timeout_ms : CSR_LAUNCH_TIMEOUT_MS;
  struct waiter w = { .l = l, .timeout_ms = timeout, .deadline = csr_mono_ms () + timeout };
  if (l->n_join)
    {
      /* pidfd is the intermediate's, which is gone. */
      if (pidfd >= 0)
        close (steal_fd (&pidfd));
      pid_t mid = pid;
      if (await_pid (&w, parent_end, mid, &pid, err) < 0)
        {
          cgroup_release (&cg);
          return -1;
        }
      /* Our child (CLONE_PARENT): its pid can't be reused before we reap it. */
      if (l->join_as_child)
        pidfd = csr_pidfd_open (pid);
    }
  if ((l->write_idmaps && csr_idmap_write (pid, l->spec, err) < 0)
      || cgroup_enter_after (l, &cg, pid, err) < 0
      || (l->before_go && l->before_go (l->face, pid, err) < 0))
    goto failed;
  char go = CSR_LAUNCH_GO;
  if (write (parent_end, &go, 1) != 1)
    goto failed;
  if (l->after_go)
    {
      int64_t t0 = csr_mono_ms ();
      if (l->after_go (l->face, pid, parent_end, err) < 0)
        goto failed;
      w.deadline += csr_mono_ms () - t0;
    }
  if (await_ready (&w, parent_end, pid, err) < 0)
    goto failed;
  out->pid = pid;
  out->pidfd = pidfd;
  out->syncfd = steal_fd (&parent_end);
  return 0;

failed:
  if (err && *err == NULL)
    csr_error_errno (err, "start the %s", l->what);
  cgroup_release (&cg);
  reap_failed (pid, pidfd);
  if (pidfd >= 0)
    close (pidfd);
  return -1;
}
