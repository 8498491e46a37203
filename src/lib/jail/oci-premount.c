/* csrun — mounts prepared by `csrun create` (as root) before a container
 * with a user namespace of its own exists: detached clones of the bind
 * sources (opened with the host root's access, as crun does: the container's
 * root, root of its user namespace only, may not reach them) and device nodes
 * (mknod is refused in a user namespace; crun makes them this way too,
 * runc binds the host's node).  The container process inherits the
 * descriptors and moves each mount into place. */
#include "config.h"
#include "oci-premount.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../oci/oci-config.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "oci-mounts.h"

static int *
fd_array (size_t n)
{
  int *a = malloc ((n ? n : 1) * sizeof (int));
  for (size_t i = 0; a && i < n; i++)
    a[i] = -1;
  return a;
}

int
csr_oci_premounts_take (int *fds, size_t n, size_t i)
{
  if (fds == NULL || i >= n)
    return -1;
  int fd = fds[i];
  fds[i] = -1;
  return fd;
}

void
csr_oci_premounts_release (struct csr_oci_premounts *p)
{
  for (size_t i = 0; p->mount_fds && i < p->n_mounts; i++)
    if (p->mount_fds[i] >= 0)
      close (p->mount_fds[i]);
  for (size_t i = 0; p->device_fds && i < p->n_devices; i++)
    if (p->device_fds[i] >= 0)
      close (p->device_fds[i]);
  free (p->mount_fds);
  free (p->device_fds);
  memset (p, 0, sizeof *p);
}

/* ID inside the user namespace -> its host id through MAP; (uid_t)-1 when
 * it is not mapped. */
static uint32_t
host_id (const struct csr_idmap *map, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= map[i].inside && id - map[i].inside < map[i].count)
      return map[i].outside + (id - map[i].inside);
  return (uint32_t)-1;
}

/* config.mounts[I], when a bind mount: a detached clone of its source, or -1. */
static int
clone_bind_source (const struct oci_mount *m, const char *bundle)
{
  unsigned long flags, propagation;
  char data[1024];
  if (m->source == NULL
      || csr_oci_parse_mount_options (m->options, m->n_options, &flags, &propagation, data,
                                      sizeof data, NULL)
             < 0)
    return -1;
  if (!(flags & MS_BIND) && !(m->type && strcmp (m->type, "bind") == 0))
    return -1;
  char src[PATH_MAX];
  if ((size_t)snprintf (src, sizeof src, "%s%s%s", m->source[0] == '/' || !bundle ? "" : bundle,
                        m->source[0] == '/' || !bundle ? "" : "/", m->source)
      >= sizeof src)
    return -1;
  return open_tree (AT_FDCWD, src,
                    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | ((flags & MS_REC) ? AT_RECURSIVE : 0));
}

static int
send_fd (int sock, int fd)
{
  char byte = fd >= 0 ? 'F' : '-';
  struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
  union
  {
    char buf[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } u;
  memset (&u, 0, sizeof u);
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
  if (fd >= 0)
    {
      msg.msg_control = u.buf;
      msg.msg_controllen = sizeof u.buf;
      struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cm), &fd, sizeof (int));
    }
  return sendmsg (sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* One descriptor (or none: -1) from SOCK; -2 when the helper is gone. */
static int
recv_fd (int sock)
{
  char byte;
  int fd;
  if (csr_recv_fd (sock, &byte, 1, &fd) != 1)
    {
      if (fd >= 0)
        close (fd);
      return -2;
    }
  if (byte != 'F' && fd >= 0)
    {
      close (fd);
      fd = -1;
    }
  return fd;
}

/* The helper: in a private mount namespace of its own, a tmpfs over /dev
 * (only there), one node per device, each sent as a detached clone of
 * itself (or '-'). */
__attribute__ ((noreturn)) static void
node_helper (const struct oci_config *c, const struct jail_spec *ids, int sock)
{
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
      || mount ("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0700,size=64k") < 0)
    _exit (1);
  umask (0);
  for (size_t i = 0; i < c->n_devices; i++)
    {
      const struct oci_device *d = &c->devices[i];
      char name[32];
      snprintf (name, sizeof name, "/dev/n%zu", i);
      mode_t kind = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
      mode_t perm = d->has_file_mode ? (d->file_mode & 07777) : 0666;
      int fd = -1;
      uint32_t uid = host_id (ids->uid_map, ids->n_uid_map, d->has_uid ? d->uid : 0);
      uint32_t gid = host_id (ids->gid_map, ids->n_gid_map, d->has_gid ? d->gid : 0);
      if (mknod (name, kind | perm, makedev ((unsigned)d->major, (unsigned)d->minor)) == 0
          && lchown (name, uid, gid) == 0)
        fd = open_tree (AT_FDCWD, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
      if (send_fd (sock, fd) < 0)
        _exit (1);
      if (fd >= 0)
        close (fd);
    }
  _exit (0);
}

static int
make_nodes (const struct oci_config *c, const struct jail_spec *ids, int *fds, csr_error **err)
{
  int sv[2];
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return csr_error_errno (err, "socketpair");
  pid_t pid = fork ();
  if (pid < 0)
    {
      close (sv[0]);
      close (sv[1]);
      return csr_error_errno (err, "fork");
    }
  if (pid == 0)
    {
      close (sv[0]);
      node_helper (c, ids, sv[1]);
    }
  close (sv[1]);
  for (size_t i = 0; i < c->n_devices; i++)
    {
      int fd = recv_fd (sv[0]);
      if (fd == -2)
        break; /* the helper could not: the container binds the host's nodes */
      fds[i] = fd;
    }
  close (sv[0]);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  return 0;
}

int
csr_oci_premounts_make (const struct oci_config *c, const char *bundle, const struct jail_spec *ids,
                        struct csr_oci_premounts *p, csr_error **err)
{
  memset (p, 0, sizeof *p);
  p->mount_fds = fd_array (c->n_mounts);
  p->device_fds = fd_array (c->n_devices);
  if (p->mount_fds == NULL || p->device_fds == NULL)
    {
      csr_oci_premounts_release (p);
      return csr_error_errno (err, "prepare the container's mounts");
    }
  p->n_mounts = c->n_mounts;
  p->n_devices = c->n_devices;
  for (size_t i = 0; i < c->n_mounts; i++)
    p->mount_fds[i] = clone_bind_source (&c->mounts[i], bundle);
  if (c->n_devices && make_nodes (c, ids, p->device_fds, err) < 0)
    {
      csr_oci_premounts_release (p);
      return -1;
    }
  return 0;
}
