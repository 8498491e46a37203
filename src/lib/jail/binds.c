#include "config.h"
#include "binds.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/filearg.h"

int
csr_binds_open (const struct jail_snippet *spec, int *fds, csr_error **err)
{
  if (spec->n_binds > CSR_MAX_BINDS)
    return csr_error_set (err, E2BIG, "at most %d --mount", CSR_MAX_BINDS);
  for (size_t i = 0; i < spec->n_binds; i++)
    {
      const struct csr_jail_bind *b = &spec->binds[i];
      int fd = (int)syscall (SYS_open_tree, AT_FDCWD, b->src,
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
      if (fd < 0)
        return csr_error_errno (err, "--mount %s: open_tree", b->src);
      fds[i] = fd;
      struct mount_attr attr = {
        .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b->rw ? 0 : MOUNT_ATTR_RDONLY),
        .propagation = MS_PRIVATE,
      };
      if (syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
        return csr_error_errno (err, "--mount %s: set its flags", b->src);
    }
  return 0;
}

/* mkdir -p of REL below DIRFD, never through a symlink; returns an O_PATH fd. */
static int
make_dirs (int dirfd, const char *rel, csr_error **err)
{
  int cur = fcntl (dirfd, F_DUPFD_CLOEXEC, 3);
  if (cur < 0)
    return csr_error_errno (err, "dup");
  char buf[1024];
  snprintf (buf, sizeof buf, "%s", rel);
  for (char *c = buf; c && *c;)
    {
      char *slash = strchr (c, '/');
      if (slash)
        *slash = '\0';
      if (mkdirat (cur, c, 0755) < 0 && errno != EEXIST)
        {
          csr_error_errno (err, "mkdir %s", c);
          close (cur);
          return -1;
        }
      int next = openat (cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      close (cur);
      if (next < 0)
        return csr_error_errno (err, "open %s (a symlink?)", c);
      cur = next;
      c = slash ? slash + 1 : NULL;
    }
  return cur;
}

/* /data or /mnt: a tmpfs over it the first time a DST goes below it. */
static int
top_tmpfs (const char *newroot, const char *top, bool *done, csr_error **err)
{
  if (*done)
    return 0;
  char p[4096];
  snprintf (p, sizeof p, "%s%s", newroot, top);
  struct stat st;
  if (lstat (p, &st) < 0 || !S_ISDIR (st.st_mode))
    return csr_error_set (err, ENOENT, "--mount: the rootfs has no %s directory", top);
  if (mount ("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "size=64k,nr_inodes=256,mode=0755")
      < 0)
    return csr_error_errno (err, "--mount: mount a tmpfs on %s", top);
  *done = true;
  return 0;
}

static int
ro_top (const char *newroot, const char *top, csr_error **err)
{
  char p[4096];
  snprintf (p, sizeof p, "%s%s", newroot, top);
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
  if (syscall (SYS_mount_setattr, AT_FDCWD, p, 0, &attr, sizeof attr) < 0)
    return csr_error_errno (err, "--mount: make %s read-only", top);
  return 0;
}

int
csr_binds_attach (const struct jail_snippet *spec, const int *fds, const char *newroot,
                  csr_error **err)
{
  bool tops[2] = { false, false };
  static const char *const top_names[2] = { "/data", "/mnt" };
  cleanup_close int rootfd = open (newroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return csr_error_errno (err, "open the new root");
  for (size_t i = 0; i < spec->n_binds; i++)
    {
      const struct csr_jail_bind *b = &spec->binds[i];
      for (int t = 0; t < 2; t++)
        if (csr_path_under (b->dst, top_names[t]) && strcmp (b->dst, top_names[t]) != 0
            && top_tmpfs (newroot, top_names[t], &tops[t], err) < 0)
          return -1;
      cleanup_close int target = -1;
      if (strcmp (b->dst, "/data") == 0 || strcmp (b->dst, "/mnt") == 0)
        target = openat (rootfd, b->dst + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      else
        target = make_dirs (rootfd, b->dst + 1, err);
      if (target < 0)
        {
          if (*err == NULL)
            csr_error_errno (err, "--mount: the rootfs has no %s directory", b->dst);
          return csr_error_wrap (err, "--mount %s", b->dst);
        }
      if (syscall (SYS_move_mount, fds[i], "", target, "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
          < 0)
        return csr_error_errno (err, "--mount %s on %s", b->src, b->dst);
    }
  for (int t = 0; t < 2; t++)
    if (tops[t] && ro_top (newroot, top_names[t], err) < 0)
      return -1;
  return 0;
}
