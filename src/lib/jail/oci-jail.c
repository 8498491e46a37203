/* csrun — `csrun create`'s side of an OCI container: clone it into the
 * config's new namespaces, write its id maps, put it in its cgroup, run the
 * prestart/createRuntime hooks when it asks, and wait until it is set up and
 * blocked on the exec FIFO. */
#include "config.h"
#include "oci-jail.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../oci/oci-config.h"
#include "../oci/hooks.h"
#include "../oci/validate.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "../cgroup/cgroup.h"
#include "child.h"
#include "idmap.h"
#include "oci-premount.h"
#include "oci-child.h"
#include "seccomp-notify.h"

#define SETUP_TIMEOUT_MS 60000

/* The namespaces to make: the config's new ones, but the cgroup namespace
 * (unshared by the container once it is in its cgroup).  *JOIN_FIRST: a pid
 * or user namespace is joined by path, which clone() can't do (see
 * via_intermediate). */
static int
clone_flags (const struct oci_config *c, uint64_t *flags, bool *join_first, csr_error **err)
{
  *flags = 0;
  *join_first = false;
  for (size_t i = 0; i < c->n_namespaces; i++)
    {
      const struct oci_namespace *ns = &c->namespaces[i];
      if (ns->path && (ns->flag == CLONE_NEWPID || ns->flag == CLONE_NEWUSER))
        *join_first = true;
      if (ns->flag == CLONE_NEWTIME)
        return csr_error_set (err, ENOTSUP, "time namespaces are not supported");
      if (ns->path == NULL && ns->flag != CLONE_NEWCGROUP)
        *flags |= (uint64_t)ns->flag;
    }
  if (*join_first && (*flags & CLONE_NEWUSER))
    return csr_error_set (err, ENOTSUP,
                          "a new user namespace together with a pid namespace joined by path is "
                          "not supported");
  return 0;
}

/* Joining a pid namespace only places the caller's children in it, and the
 * namespaces a joined user namespace should own must be made after joining
 * it: an intermediate process joins every namespace given by path (the user
 * namespace first), unshares the new ones, forks the container process, and
 * reports its pid (in our pid namespace) on SYNCFD before it exits. */
__attribute__ ((noreturn)) static void
via_intermediate (const struct jail_spec *s, uint64_t flags, int syncfd, const int *cg_fds,
                  int n_cg_fds)
{
  const struct oci_config *c = s->oci;
  csr_error *e = NULL;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < c->n_namespaces; i++)
      {
        const struct oci_namespace *ns = &c->namespaces[i];
        if (ns->path == NULL || (pass == 0) != (ns->flag == CLONE_NEWUSER))
          continue;
        int fd = open (ns->path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || setns (fd, ns->flag) < 0)
          {
            csr_error_errno (&e, "join namespace %s", ns->path);
            csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, e);
            _exit (125);
          }
        close (fd);
      }
  if (flags && unshare ((int)flags) < 0)
    {
      csr_error_errno (&e, "unshare the container's namespaces");
      csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, e);
      _exit (125);
    }
  pid_t pid = fork ();
  if (pid == 0)
    {
      struct jail_spec joined = *s;
      joined.oci_joined = true;
      csr_oci_child_main (&joined, syncfd, cg_fds, n_cg_fds);
    }
  if (pid < 0)
    {
      csr_error_errno (&e, "fork the container process");
      csr_sync_send (syncfd, CSR_SYNC_ERROR, 0, e);
      _exit (125);
    }
  csr_sync_send (syncfd, CSR_SYNC_PID, (int)pid, NULL);
  _exit (0);
}

static int
copy_maps (const struct oci_idmap *m, size_t n, struct csr_idmap *out, size_t *n_out,
           const char *what, csr_error **err)
{
  if (n > CSR_MAX_IDMAPS)
    return csr_error_set (err, E2BIG, "linux.%s: at most %d entries", what, CSR_MAX_IDMAPS);
  for (size_t i = 0; i < n; i++)
    out[i] = (struct csr_idmap){ m[i].container_id, m[i].host_id, m[i].size };
  *n_out = n;
  return 0;
}

static int
write_oom_score_adj (pid_t pid, int v, csr_error **err)
{
  char path[64], buf[16];
  snprintf (path, sizeof path, "/proc/%d/oom_score_adj", (int)pid);
  int n = snprintf (buf, sizeof buf, "%d", v);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write (fd, buf, (size_t)n) != n)
    return csr_error_errno (err, "process.oomScoreAdj %d", v);
  return 0;
}

/* One message; a descriptor attached to it (CSR_SYNC_SECCOMP) into *ATTACHED
 * when that is not NULL, else closed. */
static int
read_msg_fd (int fd, struct csr_sync_msg *m, int *attached, csr_error **err)
{
  if (attached)
    *attached = -1;
  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int n = poll (&p, 1, SETUP_TIMEOUT_MS);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return csr_error_set (err, ETIMEDOUT, "the container's set-up did not finish in %d s",
                              SETUP_TIMEOUT_MS / 1000);
      int got = -1;
      cleanup_error csr_error *e = NULL;
      ssize_t r = csr_seccomp_recv_fd (fd, m, sizeof *m, &got, &e);
      if (got >= 0 && attached)
        *attached = got;
      else if (got >= 0)
        close (got);
      if (r == (ssize_t)sizeof *m)
        {
          m->text[sizeof m->text - 1] = '\0';
          return 0;
        }
      return csr_error_set (err, 0, "the container died during set-up without saying why");
    }
}

static int
read_msg (int fd, struct csr_sync_msg *m, csr_error **err)
{
  return read_msg_fd (fd, m, NULL, err);
}

static void
kill_child (pid_t pid)
{
  kill (pid, SIGKILL);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
}

int
csr_oci_jail_create (const struct jail_spec *spec, csr_oci_state_fn state_fn, void *data,
                     pid_t *pid_out, csr_error **err)
{
  const struct oci_config *c = spec->oci;
  struct jail_spec s = *spec;
  uint64_t flags;
  bool join_first;
  /* The caller validated it already (to fail before it made anything); a
   * library caller that did not gets the same checks here. */
  if (oci_config_validate (c, err) < 0 || clone_flags (c, &flags, &join_first, err) < 0)
    return -1;
  if (c->n_unknown_caps)
    csr_warn ("process.capabilities: unknown capability '%s' ignored%s", c->unknown_cap,
              c->n_unknown_caps > 1 ? " (and others)" : "");
  bool userns = (flags & CLONE_NEWUSER) != 0;
  if (userns
      && (copy_maps (c->uid_mappings, c->n_uid_mappings, s.uid_map, &s.n_uid_map, "uidMappings",
                     err)
              < 0
          || copy_maps (c->gid_mappings, c->n_gid_mappings, s.gid_map, &s.n_gid_map, "gidMappings",
                        err)
                 < 0))
    return -1;
  if (userns && (s.n_uid_map == 0 || s.n_gid_map == 0))
    csr_idmap_default (&s, geteuid (), getegid ());
  cleanup_free char *listener_path = NULL, *listener_metadata = NULL;
  if (s.seccomp_bpf && c->seccomp_json
      && csr_seccomp_listener_config (c->seccomp_json, strlen (c->seccomp_json), &listener_path,
                                      &listener_metadata, err)
             < 0)
    return -1;
  s.oci_seccomp_listener = listener_path != NULL;

  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  cleanup_close int parent_end = sv[0];
  cleanup_close int child_end = sv[1];
  /* The container's cgroup without the kernel's migration wait: cloned into
   * it on v2; on v1 (and a hybrid host's v1 side) the child writes 0 to
   * each "tasks" file opened here (a task moving only itself skips the
   * global lock); whatever neither did, csr_cgroup_enter does. */
  int cg_fds[CSR_CG_MAX_DIRS];
  int n_cg_fds = csr_cgroup_self_enter_fds (s.cgroup, cg_fds, NULL);
  int v2_fd = csr_cgroup_clone_fd (s.cgroup);
  /* As root, with a user namespace of its own: bind sources and device
   * nodes made here, before it exists (crun's way; see oci-premount.c). */
  __attribute__ ((cleanup (csr_oci_premounts_release))) struct csr_oci_premounts pre = { 0 };
  if (userns && geteuid () == 0 && s.oci_premounts == NULL && (c->n_mounts || c->n_devices))
    {
      if (csr_oci_premounts_make (c, s.oci_bundle, &s, &pre, err) < 0)
        {
          while (n_cg_fds > 0)
            close (cg_fds[--n_cg_fds]);
          return -1;
        }
      s.oci_premounts = &pre;
    }
  int pidfd = -1;
  uint64_t cflags = join_first ? 0 : flags;
  pid_t pid = v2_fd >= 0 ? csr_clone_into (cflags, v2_fd, &pidfd) : -1;
  bool in_cgroup = (v2_fd < 0 || pid >= 0) && n_cg_fds >= 0;
  if (n_cg_fds < 0)
    n_cg_fds = 0;
  if (pid < 0)
    pid = csr_clone (cflags, &pidfd);
  for (int i = 0; pid != 0 && i < n_cg_fds; i++)
    close (cg_fds[i]);
  if (pid < 0)
    {
      if (userns && (errno == EPERM || errno == ENOSPC || errno == EUSERS))
        return csr_error_errno (err, "create the container's user namespace");
      return csr_error_errno (err, "clone the container");
    }
  if (pid == 0)
    {
      close (parent_end);
      if (join_first)
        via_intermediate (&s, flags, child_end, cg_fds, n_cg_fds);
      csr_oci_child_main (&s, child_end, cg_fds, n_cg_fds);
    }
  if (pidfd >= 0)
    close (pidfd);
  close (child_end);
  child_end = -1;
  if (join_first)
    {
      /* The intermediate reports the container's pid, then exits. */
      pid_t mid = pid;
      struct csr_sync_msg m;
      int rc = read_msg (parent_end, &m, err);
      while (waitpid (mid, NULL, 0) < 0 && errno == EINTR)
        ;
      if (rc < 0)
        return -1;
      if (m.type == CSR_SYNC_ERROR)
        return csr_error_set (err, m.err, "%s", m.text);
      if (m.type != CSR_SYNC_PID || m.status <= 0)
        return csr_error_set (err, 0, "unexpected message %u from the container", m.type);
      pid = (pid_t)m.status;
    }

  if ((userns && csr_idmap_write (pid, &s, err) < 0)
      || (!in_cgroup && csr_cgroup_enter (s.cgroup, pid, err) < 0)
      || (c->has_oom_score_adj && write_oom_score_adj (pid, c->oom_score_adj, err) < 0)
      || write (parent_end, "G", 1) != 1)
    goto failed;
  if (c->n_hooks[OCI_HOOK_CREATE_CONTAINER] + c->n_hooks[OCI_HOOK_START_CONTAINER] > 0)
    {
      cleanup_free char *st = state_fn (pid, false, data);
      if (st == NULL || send (parent_end, st, strlen (st), MSG_NOSIGNAL) < 0)
        {
          csr_error_errno (err, "send the state to the container");
          goto failed;
        }
    }
  for (;;)
    {
      struct csr_sync_msg m;
      int attached = -1;
      if (read_msg_fd (parent_end, &m, &attached, err) < 0)
        goto failed;
      if (m.type == CSR_SYNC_SECCOMP)
        {
          /* The listener to the agent, with the state (status "creating"). */
          cleanup_close int listener = attached;
          cleanup_free char *st
              = listener >= 0 && listener_path ? state_fn (pid, true, data) : NULL;
          if (st == NULL)
            {
              csr_error_set (err, 0, "the container sent no seccomp listener");
              goto failed;
            }
          if (csr_seccomp_listener_send (listener_path, listener, pid, listener_metadata, st, err)
              < 0)
            goto failed;
          continue;
        }
      if (attached >= 0)
        close (attached);
      if (m.type == CSR_SYNC_READY)
        break;
      if (m.type == CSR_SYNC_ERROR)
        {
          errno = m.err;
          csr_error_set (err, m.err, "%s", m.text);
          goto failed;
        }
      if (m.type != CSR_SYNC_HOOKS)
        {
          csr_error_set (err, 0, "unexpected message %u from the container", m.type);
          goto failed;
        }
      cleanup_free char *st = state_fn (pid, false, data);
      if (st == NULL)
        {
          csr_error_set (err, ENOMEM, "the state for the hooks");
          goto failed;
        }
      /* Hooks run with the bundle as their working directory. */
      cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (spec->oci_bundle && chdir (spec->oci_bundle) < 0)
        {
          csr_error_errno (err, "chdir %s", spec->oci_bundle);
          goto failed;
        }
      int rc = oci_hooks_run (c, OCI_HOOK_PRESTART, st, err);
      if (rc == 0)
        rc = oci_hooks_run (c, OCI_HOOK_CREATE_RUNTIME, st, err);
      if (cwd >= 0)
        (void)!fchdir (cwd);
      if (rc < 0 || write (parent_end, "H", 1) != 1)
        goto failed;
    }
  *pid_out = pid;
  return 0;

failed:
  if (err && *err == NULL)
    csr_error_errno (err, "create the container");
  kill_child (pid);
  return -1;
}
