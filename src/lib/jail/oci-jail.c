/* csrun — the OCI face of the launcher (`csrun create`'s side of a
 * container): the config's namespaces as clone flags (or joined by path
 * through the launcher's intermediate), its id maps, premounts as root,
 * oom_score_adj before the go, the state after it, the seccomp listener
 * and the command's prestart/createRuntime hooks when the container asks;
 * the launcher waits until it is set up and blocked on the exec FIFO. */
#include "config.h"
#include "oci-jail.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../oci/oci-config.h"
#include "../oci/hooks.h"
#include "../oci/validate.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "idmap.h"
#include "launch.h"
#include "oci-premount.h"
#include "oci-child.h"
#include "seccomp-notify.h"

/* Namespaces given by path (one per type: validate refuses duplicates). */
#define MAX_JOINED 16

/* The namespaces to make: the config's new ones, but the cgroup namespace
 * (unshared by the container once it is in its cgroup).  *JOIN_FIRST: a pid
 * or user namespace is joined by path, which clone() can't do (see
 * launch.c's via_intermediate). */
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

void
csr_oci_spec_init (struct csr_oci_spec *spec)
{
  memset (spec, 0, sizeof *spec);
  jail_spec_init (&spec->jail);
  spec->exec_fifo = spec->console = -1;
}

/* Parent side, before the go: process.oomScoreAdj. */
static int
oci_before_go (void *face, pid_t pid, csr_error **err)
{
  const struct oci_config *c = ((struct csr_oci_launch *)face)->spec->config;
  if (c->has_oom_score_adj && write_oom_score_adj (pid, c->oom_score_adj, err) < 0)
    return -1;
  return 0;
}

/* After the go: the state document, for the hooks the container runs itself. */
static int
oci_after_go (void *face, pid_t pid, int syncfd, csr_error **err)
{
  const struct csr_oci_launch *o = face;
  const struct oci_config *c = o->spec->config;
  if (c->n_hooks[OCI_HOOK_CREATE_CONTAINER] + c->n_hooks[OCI_HOOK_START_CONTAINER] == 0)
    return 0;
  cleanup_free char *st = o->ops->state (pid, false, o->ops->data);
  if (st == NULL || send (syncfd, st, strlen (st), MSG_NOSIGNAL) < 0)
    return csr_error_errno (err, "send the state to the container");
  return 0;
}

/* CSR_SYNC_SECCOMP (the listener, to the agent with the state, status
 * "creating") and CSR_SYNC_HOOKS (the command runs prestart and
 * createRuntime, then 'H'). */
static int
oci_on_message (void *face, pid_t pid, int syncfd, const struct csr_sync_msg *m, int fd,
                csr_error **err)
{
  const struct csr_oci_launch *o = face;
  cleanup_close int attached = fd;
  if (m->type == CSR_SYNC_SECCOMP)
    {
      cleanup_free char *st
          = attached >= 0 && o->listener_path ? o->ops->state (pid, true, o->ops->data) : NULL;
      if (st == NULL)
        return csr_error_set (err, 0, "the container sent no seccomp listener");
      return csr_seccomp_listener_send (o->listener_path, attached, pid, o->listener_metadata, st,
                                        err);
    }
  if (m->type != CSR_SYNC_HOOKS || o->ops->runtime_hooks == NULL)
    return csr_error_set (err, 0, "unexpected message %u from the container", m->type);
  if (o->ops->runtime_hooks (pid, o->ops->data, err) < 0)
    return -1;
  if (write (syncfd, "H", 1) != 1)
    return csr_error_errno (err, "resume the container after its hooks");
  return 0;
}

int
csr_oci_jail_create (const struct csr_oci_spec *spec, const struct csr_oci_create_ops *ops,
                     pid_t *pid_out, csr_error **err)
{
  const struct oci_config *c = spec->config;
  struct csr_oci_spec s = *spec;
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
  struct jail_spec *j = &s.jail;
  if (userns
      && (copy_maps (c->uid_mappings, c->n_uid_mappings, j->uid_map, &j->n_uid_map, "uidMappings",
                     err)
              < 0
          || copy_maps (c->gid_mappings, c->n_gid_mappings, j->gid_map, &j->n_gid_map,
                        "gidMappings", err)
                 < 0))
    return -1;
  if (userns && (j->n_uid_map == 0 || j->n_gid_map == 0))
    csr_idmap_default (j, geteuid (), getegid ());
  struct csr_oci_launch o = { .spec = &s, .ops = ops };
  cleanup_free char *listener_path = NULL, *listener_metadata = NULL;
  if (j->seccomp_bpf && c->seccomp_json
      && csr_seccomp_listener_config (c->seccomp_json, strlen (c->seccomp_json), &listener_path,
                                      &listener_metadata, err)
             < 0)
    return -1;
  o.seccomp_listener = listener_path != NULL;
  o.listener_path = listener_path;
  o.listener_metadata = listener_metadata;
  /* As root, with a user namespace of its own: bind sources and device
   * nodes made here, before it exists (crun's way; see oci-premount.c). */
  __attribute__ ((cleanup (csr_oci_premounts_release))) struct csr_oci_premounts pre = { 0 };
  if (userns && geteuid () == 0 && s.premounts == NULL && (c->n_mounts || c->n_devices))
    {
      if (csr_oci_premounts_make (c, s.bundle, j, &pre, err) < 0)
        return -1;
      s.premounts = &pre;
    }
  /* A pid or user namespace given by path: every namespace given by path is
   * joined by the launcher's intermediate process. */
  struct csr_launch_ns join[MAX_JOINED];
  size_t n_join = 0;
  for (size_t i = 0; join_first && i < c->n_namespaces; i++)
    if (c->namespaces[i].path)
      {
        if (n_join == MAX_JOINED)
          return csr_error_set (err, E2BIG, "linux.namespaces: at most %d given by path",
                                MAX_JOINED);
        join[n_join++] = (struct csr_launch_ns){ c->namespaces[i].path, c->namespaces[i].flag };
      }
  struct csr_launch l = {
    .spec = j,
    .face = &o,
    .entry = csr_oci_entry,
    .clone_flags = flags,
    .write_idmaps = userns,
    .join = join,
    .n_join = n_join,
    .what = "container",
    .before_go = oci_before_go,
    .after_go = oci_after_go,
    .on_message = oci_on_message,
  };
  struct csr_launched out;
  if (csr_launch (&l, &out, err) < 0)
    return -1;
  if (out.pidfd >= 0)
    close (out.pidfd);
  close (out.syncfd);
  *pid_out = out.pid;
  return 0;
}
