/* csrun — a sandbox's --disk: a size cap on its writable layer (keeper.h).
 *
 * The cap is a tmpfs of SIZE bytes that holds upper/ and ovl-work/.  A
 * rootless keeper can't mount it, and overlayfs takes an upper layer only
 * from the mounter's own mount namespace (a path into another one fails
 * with EINVAL, a detached mount of another user namespace with EPERM:
 * fs/namespace.c clone_private_mount).  So, through the one launcher
 * (jail/launch.h), a short-lived process in a new user namespace (the
 * jail's id maps) and a new mount namespace mounts the tmpfs on the
 * sandbox's disk/ (an empty directory on the host), and hands the keeper
 * both namespaces and the tmpfs's root; it exits, the keeper's descriptors
 * hold them.  Each start of the jail joins that user namespace and copies
 * that mount namespace (spec.h join_userns, join_mntns): the tmpfs is in
 * the jail's own mount table, under the same owner.  Stop and start keep
 * it; the keeper's end (rm, idle, TTL, SIGKILL) frees it.  tmpfs keeps
 * user.* extended attributes (overlayfs' userxattr) since Linux 6.6. */
#include "config.h"
#include "keeper.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../jail/caps.h"
#include "../jail/launch.h"
#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/json-gen.h"

enum
{
  DISK_USERNS,
  DISK_MNTNS,
  DISK_ROOT,
};

struct disk_face
{
  const char *mountpoint;
  uint64_t bytes;
  int fds[3];
};

/* The tmpfs, attached on MP (a descriptor); its root (a mount descriptor). */
static int
mount_tmpfs (int mp, uint64_t bytes, csr_error **err)
{
  char size[32];
  snprintf (size, sizeof size, "%llu", (unsigned long long)bytes);
  cleanup_close int fs = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0)
    return csr_error_errno (err, "tmpfs");
  if (fsconfig (fs, FSCONFIG_SET_STRING, "size", size, 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0
      || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return csr_error_errno (err, "a tmpfs of %s bytes", size);
  int mfd = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mfd < 0)
    return csr_error_errno (err, "mount the tmpfs");
  if (move_mount (mfd, "", mp, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    {
      csr_error_errno (err, "attach the tmpfs");
      close (mfd);
      return -1;
    }
  return mfd;
}

/* The process in the new namespaces (after the go: its maps are written). */
__attribute__ ((noreturn)) static void
disk_entry (const struct jail_spec *spec, void *face, const struct csr_launch_child *lc)
{
  (void)spec;
  struct disk_face *f = face;
  csr_error *e = NULL;
  /* Nothing mounted here reaches the host's namespace. */
  if (mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    {
      csr_error_errno (&e, "make the mounts slaves");
      csr_launch_fail (lc->syncfd, e);
    }
  /* Reached with the host identity (the state directory is 0700), mounted
   * as the namespace's root (who owns the tmpfs). */
  cleanup_close int mp = open (f->mountpoint, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (mp < 0)
    {
      csr_error_errno (&e, "open %s", f->mountpoint);
      csr_launch_fail (lc->syncfd, e);
    }
  int fds[3] = { -1, -1, -1 };
  if (csr_caps_become_ns_root (&e) < 0 || (fds[DISK_ROOT] = mount_tmpfs (mp, f->bytes, &e)) < 0)
    csr_launch_fail (lc->syncfd, e);
  const char *what[3] = { "/proc/self/ns/user", "/proc/self/ns/mnt", "the tmpfs" };
  for (int i = 0; i < 3; i++)
    {
      if (i != DISK_ROOT && (fds[i] = open (what[i], O_RDONLY | O_CLOEXEC)) < 0)
        {
          csr_error_errno (&e, "open %s", what[i]);
          csr_launch_fail (lc->syncfd, e);
        }
      struct csr_sync_msg m;
      memset (&m, 0, sizeof m);
      m.type = CSR_SYNC_FD;
      m.status = i;
      if (csr_send_fd (lc->syncfd, &m, sizeof m, fds[i]) != (ssize_t)sizeof m)
        {
          csr_error_errno (&e, "hand over %s", what[i]);
          csr_launch_fail (lc->syncfd, e);
        }
    }
  csr_sync_send (lc->syncfd, CSR_SYNC_READY, 0, NULL);
  _exit (0);
}

static int
disk_message (void *face, pid_t pid, int syncfd, const struct csr_sync_msg *m, int fd,
              csr_error **err)
{
  (void)pid, (void)syncfd;
  struct disk_face *f = face;
  if (m->type != CSR_SYNC_FD || m->status < 0 || m->status > DISK_ROOT || fd < 0
      || f->fds[m->status] >= 0)
    {
      if (fd >= 0)
        close (fd);
      return csr_error_set (err, EPROTO, "unexpected message %u from the disk's process", m->type);
    }
  f->fds[m->status] = fd;
  return 0;
}

int
keeper_disk_make (struct keeper *k, const char *mountpoint, csr_error **err)
{
  struct disk_face f = { mountpoint, k->spec->disk, { -1, -1, -1 } };
  struct jail_spec ids = k->sn.jail; /* its id maps */
  ids.cgroup = NULL;
  ids.seccomp_bpf = NULL;
  struct csr_launch l = {
    .spec = &ids,
    .face = &f,
    .entry = disk_entry,
    .clone_flags = CLONE_NEWUSER | CLONE_NEWNS,
    .write_idmaps = true,
    .what = "disk",
    .prefix_error = true,
    .on_message = disk_message,
  };
  struct csr_launched out;
  int rc = csr_launch (&l, &out, err);
  if (rc == 0)
    {
      while (waitpid (out.pid, NULL, 0) < 0 && errno == EINTR)
        ;
      if (out.pidfd >= 0)
        close (out.pidfd);
      close (out.syncfd);
      if (f.fds[0] < 0 || f.fds[1] < 0 || f.fds[2] < 0)
        rc = csr_error_set (err, EPROTO, "the disk's process did not hand over its namespaces");
    }
  if (rc < 0)
    {
      for (int i = 0; i < 3; i++)
        if (f.fds[i] >= 0)
          close (f.fds[i]);
      return csr_error_wrap (err, "--disk");
    }
  memcpy (k->disk_fds, f.fds, sizeof f.fds);
  snprintf (k->disk_userns, sizeof k->disk_userns, "/proc/self/fd/%d", f.fds[DISK_USERNS]);
  snprintf (k->disk_mntns, sizeof k->disk_mntns, "/proc/self/fd/%d", f.fds[DISK_MNTNS]);
  k->sn.join_userns = k->disk_userns;
  k->sn.join_mntns = k->disk_mntns;
  return 0;
}

int
keeper_disk_root (const struct keeper *k)
{
  return k->disk_fds[DISK_ROOT];
}

/* ------------------------------------------------------------ the part */

static void
op_disk (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  if (k->disk_fds[DISK_ROOT] < 0)
    return keeper_reply_error (fd, "this sandbox has no --disk");
  struct statfs st;
  if (fstatfs (k->disk_fds[DISK_ROOT], &st) < 0)
    return keeper_reply_errorf (fd, "the disk: %s", strerror (errno));
  unsigned long long bs = (unsigned long long)st.f_bsize;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return keeper_reply_error (fd, "out of memory");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "disk");
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "mechanism", "tmpfs");
  csr_jgen_kv_int (&w, "size_bytes", (long long)(st.f_blocks * bs));
  csr_jgen_kv_int (&w, "used_bytes", (long long)((st.f_blocks - st.f_bfree) * bs));
  csr_jgen_kv_int (&w, "free_bytes", (long long)(st.f_bavail * bs));
  csr_jgen_kv_int (&w, "inodes", (long long)st.f_files);
  csr_jgen_kv_int (&w, "inodes_used", (long long)(st.f_files - st.f_ffree));
  csr_jgen_map_close (&w);
  csr_jgen_map_close (&w);
  keeper_reply_gen (fd, &w);
}

static void
disk_finish (struct keeper *k)
{
  for (int i = 0; i < 3; i++)
    if (k->disk_fds[i] >= 0)
      {
        close (k->disk_fds[i]);
        k->disk_fds[i] = -1;
      }
}

static const struct keeper_op disk_ops[] = {
  { "disk", op_disk, false },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_disk = { "disk", disk_ops, NULL, NULL, NULL, disk_finish };
