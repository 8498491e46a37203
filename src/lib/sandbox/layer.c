/* csrun — a sandbox's writable layer and its holder (see layer.h). */
#include "config.h"
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/syscalls.h"

/* The assembly point of the new root, as in jail/mounts.c: the host's /tmp
 * seen from the jail's own mount namespace. */
#define NEWROOT "/tmp"

static int
ovl_set (int fsfd, const char *key, const char *value, csr_error **err)
{
  if (fsconfig (fsfd, value ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key, value, 0) < 0)
    return csr_error_errno (err, "overlay option %s%s%s", key, value ? "=" : "",
                            value ? value : "");
  return 0;
}

int
csr_sandbox_layer_open (const struct jail_snippet *spec, int fds[CSR_SANDBOX_LAYER_FDS],
                        csr_error **err)
{
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return csr_error_errno (err, "make the mounts private");
  const char *paths[CSR_SANDBOX_LAYER_FDS]
      = { spec->jail.rootfs_dir, spec->jail.layer_dir, spec->layer_upper, spec->layer_work };
  for (int i = 0; i < CSR_SANDBOX_LAYER_FDS; i++)
    if (paths[i] && (fds[i] = open (paths[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
      return csr_error_errno (err, "open %s", paths[i]);
  return 0;
}

int
csr_sandbox_mount_layer (int fds[CSR_SANDBOX_LAYER_FDS], csr_error **err)
{
  char p[CSR_SANDBOX_LAYER_FDS][40];
  for (int i = 0; i < CSR_SANDBOX_LAYER_FDS; i++)
    snprintf (p[i], sizeof p[i], "/proc/self/fd/%d", fds[i]);
  /* --with: the package layer is the upper-most lower layer. */
  char lower[90];
  snprintf (lower, sizeof lower, "%s%s%s", fds[1] >= 0 ? p[1] : "", fds[1] >= 0 ? ":" : "", p[0]);
  cleanup_close int fsfd = fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return csr_error_errno (err, "overlayfs (the sandbox's writable layer)");
  /* userxattr: overlayfs in a user namespace keeps its metadata in user.*
   * extended attributes (trusted.* needs host privileges). */
  if (ovl_set (fsfd, "lowerdir", lower, err) < 0 || ovl_set (fsfd, "upperdir", p[2], err) < 0
      || ovl_set (fsfd, "workdir", p[3], err) < 0 || ovl_set (fsfd, "userxattr", NULL, err) < 0)
    return -1;
  if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return csr_error_errno (err, "create the sandbox's overlay");
  for (int i = 0; i < CSR_SANDBOX_LAYER_FDS; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  cleanup_close int mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mfd < 0)
    return csr_error_errno (err, "mount the sandbox's overlay");
  if (move_mount (mfd, "", AT_FDCWD, NEWROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return csr_error_errno (err, "attach the sandbox's overlay");
  return 0;
}

/* The order a process outside joins them in (jail/enter.c's): the user
 * namespace first, which owns the others; the mount namespace last. */
const char *const csr_sandbox_ns_names[CSR_SANDBOX_N_NS]
    = { "user", "ipc", "uts", "net", "pid", "cgroup", "mnt" };

void
csr_sandbox_hold (void)
{
  prctl (PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* fd 3: the keeper's socket.  The jail's init is not dumpable, so the
   * keeper can't open its /proc/PID/ns (rootless): the holder hands them
   * over, opened from inside. */
  int fds[CSR_SANDBOX_N_NS];
  size_t n = 0;
  for (size_t i = 0; i < CSR_SANDBOX_N_NS; i++)
    {
      char p[32];
      snprintf (p, sizeof p, "/proc/self/ns/%s", csr_sandbox_ns_names[i]);
      fds[i] = open (p, O_RDONLY | O_CLOEXEC);
      if (fds[i] >= 0)
        n++;
    }
  if (n == CSR_SANDBOX_N_NS)
    {
      char byte = 'N';
      struct iovec iov = { &byte, 1 };
      union
      {
        char buf[CMSG_SPACE (sizeof fds)];
        struct cmsghdr align;
      } u;
      struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf
      };
      struct cmsghdr *c = CMSG_FIRSTHDR (&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN (sizeof fds);
      memcpy (CMSG_DATA (c), fds, sizeof fds);
      if (sendmsg (3, &mh, MSG_NOSIGNAL) < 0)
        _exit (125);
    }
  csr_close_range (3, 0);
  for (;;)
    pause ();
}
