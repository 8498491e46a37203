#include "config.h"
#include "mounts.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/syscalls.h"
#include "binds.h"

/* Where the new root is assembled: the rootfs is bind-mounted over the host's
 * /tmp inside the jail's own mount namespace (the host never sees it), so no
 * directory has to be created on the host. */
#define NEWROOT "/tmp"

/* The OCI runtimes' default masked paths under /proc (runc's spec template,
 * containers/common: acpi, asound, kcore, keys, latency_stats, timer_list,
 * timer_stats, sched_debug, scsi, interrupts), sysrq-trigger (read-only
 * there), and what tells a snippet about the host's boot and disks: cmdline,
 * config.gz, partitions, diskstats.  Their /sys paths (firmware, fs/selinux,
 * dev/block, devices/virtual/powercap) don't apply: the snippet jail mounts
 * no sysfs.  Each file costs a bind mount and a remount on every run. */
static const char *const masked_paths[] = {
  "/proc/acpi",          "/proc/asound",     "/proc/kcore",         "/proc/keys",
  "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",   "/proc/sched_debug",
  "/proc/scsi",          "/proc/interrupts", "/proc/sysrq-trigger", "/proc/cmdline",
  "/proc/config.gz",     "/proc/partitions", "/proc/diskstats",
};

static const char *const readonly_paths[] = {
  "/proc/bus",
  "/proc/fs",
  "/proc/irq",
  "/proc/sys",
};

static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

/* /dev's symbolic links: target, name. */
static const char *const dev_links[][2] = {
  { "/proc/self/fd", "fd" },       { "/proc/self/fd/0", "stdin" }, { "/proc/self/fd/1", "stdout" },
  { "/proc/self/fd/2", "stderr" }, { "pts/ptmx", "ptmx" },
};

void
csr_mounts_tables (struct csr_mounts_tables *t)
{
  t->masked = masked_paths;
  t->n_masked = sizeof masked_paths / sizeof masked_paths[0];
  t->readonly = readonly_paths;
  t->n_readonly = sizeof readonly_paths / sizeof readonly_paths[0];
}

static int
do_mount (const char *src, const char *dst, const char *type, unsigned long flags, const char *data,
          csr_error **err)
{
  if (mount (src, dst, type, flags, data) < 0)
    return csr_error_errno (err, "mount %s on %s", type ? type : (src ? src : "none"), dst);
  return 0;
}

/* Mount flags a bind remount in a user namespace must keep (the kernel refuses
 * to drop "locked" flags inherited from the parent namespace). */
static unsigned long
locked_flags (const char *path)
{
  struct statvfs sv;
  unsigned long f = 0;
  if (statvfs (path, &sv) < 0)
    return 0;
  if (sv.f_flag & ST_NOSUID)
    f |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV)
    f |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC)
    f |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME)
    f |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME)
    f |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME)
    f |= MS_RELATIME;
  return f;
}

/* Add FLAGS (MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC) to the mount at PATH,
 * not recursively.  A bind mount ignores these flags when it is created. */
static int restrict_mount_flags (const char *path, unsigned long extra, unsigned int at,
                                 csr_error **err);
static int
restrict_mount (const char *path, unsigned long extra, csr_error **err)
{
  return restrict_mount_flags (path, extra, 0, err);
}

/* AT: 0, or AT_RECURSIVE for the mounts below PATH too. */
static int
restrict_mount_flags (const char *path, unsigned long extra, unsigned int at, csr_error **err)
{
  struct mount_attr attr = { 0 };
  if (extra & MS_RDONLY)
    attr.attr_set |= MOUNT_ATTR_RDONLY;
  if (extra & MS_NOSUID)
    attr.attr_set |= MOUNT_ATTR_NOSUID;
  if (extra & MS_NODEV)
    attr.attr_set |= MOUNT_ATTR_NODEV;
  if (extra & MS_NOEXEC)
    attr.attr_set |= MOUNT_ATTR_NOEXEC;
  if (syscall (SYS_mount_setattr, AT_FDCWD, path, at, &attr, sizeof attr) == 0)
    return 0;
  unsigned long flags = MS_REMOUNT | MS_BIND | extra | locked_flags (path);
  return do_mount (NULL, path, NULL, flags, NULL, err);
}

/* Open DIR/NAME as a directory without following a symlink in the last
 * component: a hostile rootfs can't redirect a mount target. */
static int
open_target (int dirfd, const char *dir, const char *name, csr_error **err)
{
  int fd = openat (dirfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      struct stat st;
      if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
        return csr_error_set (err, ELOOP, "rootfs: %s/%s is a symlink, refusing to mount on it",
                              dir, name);
      return csr_error_errno (err, "rootfs: %s/%s must be a directory", dir, name);
    }
  return fd;
}

static int
mount_on_fd (const char *src, int fd, const char *what, const char *type, unsigned long flags,
             const char *data, csr_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  if (mount (src, path, type, flags, data) < 0)
    return csr_error_errno (err, "mount %s on %s", type ? type : "bind", what);
  return 0;
}

static int
setup_tmpfs (int rootfd, const char *name, const char *mode, const struct jail_snippet *spec,
             csr_error **err)
{
  cleanup_close int fd = open_target (rootfd, "", name, err);
  if (fd < 0)
    return -1;
  char opts[160];
  snprintf (opts, sizeof opts, "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=%s,uid=%u,gid=%u",
            spec->tmp_size, spec->tmp_inodes, mode, (unsigned)spec->uid, (unsigned)spec->gid);
  char what[32];
  snprintf (what, sizeof what, "/%s", name);
  return mount_on_fd ("tmpfs", fd, what, "tmpfs", MS_NOSUID | MS_NODEV, opts, err);
}

static int
setup_dev (int rootfd, csr_error **err)
{
  cleanup_close int fd = open_target (rootfd, "", "dev", err);
  if (fd < 0)
    return -1;
  if (mount_on_fd ("tmpfs", fd, "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
                   "size=64k,nr_inodes=64,mode=0755", err)
      < 0)
    return -1;
  for (size_t i = 0; i < sizeof dev_nodes / sizeof dev_nodes[0]; i++)
    {
      char src[64], dst[64];
      snprintf (src, sizeof src, "/dev/%s", dev_nodes[i]);
      snprintf (dst, sizeof dst, NEWROOT "/dev/%s", dev_nodes[i]);
      int f = open (dst, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (f < 0)
        return csr_error_errno (err, "create %s", dst + sizeof NEWROOT - 1);
      close (f);
      if (do_mount (src, dst, NULL, MS_BIND, NULL, err) < 0
          || restrict_mount (dst, MS_NOSUID | MS_NOEXEC, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < sizeof dev_links / sizeof dev_links[0]; i++)
    {
      char dst[64];
      snprintf (dst, sizeof dst, NEWROOT "/dev/%s", dev_links[i][1]);
      if (symlink (dev_links[i][0], dst) < 0)
        return csr_error_errno (err, "symlink /dev/%s", dev_links[i][1]);
    }
  const char *dirs[] = { NEWROOT "/dev/shm", NEWROOT "/dev/pts" };
  for (size_t i = 0; i < 2; i++)
    if (mkdir (dirs[i], 0755) < 0)
      return csr_error_errno (err, "mkdir %s", dirs[i] + sizeof NEWROOT - 1);
  if (do_mount ("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "size=64m,nr_inodes=1024,mode=1777", err)
      < 0)
    return -1;
  if (do_mount ("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=0620", err)
      < 0)
    return -1;
  return restrict_mount (NEWROOT "/dev", MS_RDONLY | MS_NOSUID | MS_NOEXEC, err);
}

static int
setup_proc (int rootfd, bool unmasked, csr_error **err)
{
  cleanup_close int fd = open_target (rootfd, "", "proc", err);
  if (fd < 0)
    return -1;
  if (mount_on_fd ("proc", fd, "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL, err) < 0)
    return -1;
  /* issue 17: a zygote's /proc (spec.h ZYGOTE) stays whole. */
  if (unmasked)
    return 0;
  for (size_t i = 0; i < sizeof masked_paths / sizeof masked_paths[0]; i++)
    {
      char p[128];
      snprintf (p, sizeof p, NEWROOT "%s", masked_paths[i]);
      if (csr_mounts_mask (p, err) < 0)
        return -1;
    }
  for (size_t i = 0; i < sizeof readonly_paths / sizeof readonly_paths[0]; i++)
    {
      char p[128];
      snprintf (p, sizeof p, NEWROOT "%s", readonly_paths[i]);
      if (csr_mounts_readonly (p, err) < 0)
        return -1;
    }
  return 0;
}

int
csr_mounts_mask (const char *p, csr_error **err)
{
  struct stat st;
  if (lstat (p, &st) < 0)
    return 0; /* not on this kernel */
  if (S_ISDIR (st.st_mode))
    return do_mount ("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                     "size=0,nr_inodes=1,mode=0555", err);
  if (do_mount ("/dev/null", p, NULL, MS_BIND, NULL, err) < 0
      || restrict_mount (p, MS_RDONLY | MS_NOSUID | MS_NOEXEC, err) < 0)
    return -1;
  return 0;
}

int
csr_mounts_readonly (const char *p, csr_error **err)
{
  if (access (p, F_OK) < 0)
    return 0;
  if (do_mount (p, p, NULL, MS_BIND | MS_REC, NULL, err) < 0)
    return -1;
  return restrict_mount_flags (p, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, AT_RECURSIVE, err);
}

int
csr_mounts_restrict (const char *path, unsigned long flags, csr_error **err)
{
  return restrict_mount (path, flags, err);
}

int
csr_mounts_restrict_tree (const char *path, unsigned long flags, csr_error **err)
{
  return restrict_mount_flags (path, flags, AT_RECURSIVE, err);
}

/* DIRFD/NAME is a real directory (not a symlink) with no entries. */
static bool
empty_dir_at (int dirfd, const char *name)
{
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  cleanup_dir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return false;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      return false;
  return true;
}

static int
pivot (csr_error **err)
{
  if (chdir (NEWROOT) < 0)
    return csr_error_errno (err, "chdir to new root");
  if (csr_pivot_root (".", ".") < 0)
    return csr_error_errno (err, "pivot_root");
  if (umount2 (".", MNT_DETACH) < 0)
    return csr_error_errno (err, "detach old root");
  if (chdir ("/") < 0)
    return csr_error_errno (err, "chdir /");
  return 0;
}

/* Mount the rootfs as a read-only overlay whose layers are given relative to
 * a chroot into the rootfs' parent directory: overlayfs records each layer
 * as seen from the mounter's root, so /proc/self/mountinfo in the jail shows
 * "lowerdir=/<name>:/.empty" instead of the host path of csrun's cache (a
 * bind mount's root field always shows the path inside the host file
 * system).  An overlay without an upper layer needs two lower layers: the
 * second one is PARENT/.empty, which the rootfs cache keeps (an empty
 * directory; a non-empty one is refused, its files would show through).
 * With a package layer (LAYER_DIR, `csrun run --with`) the two lower layers
 * are the package layer (upper-most) and the rootfs: "/layers/<key>:/<name>"
 * when the layer is below the rootfs' parent (the cache), else the host
 * paths.
 * Returns 1 when mounted, 0 when this rootfs can't be mounted this way
 * (no PARENT/.empty, an old kernel, no overlayfs in a user namespace), -1 on
 * an error that leaves the process in an unknown state.  With a layer every
 * failure is -1: the rootfs without its packages is not what was asked. */
static int
overlay_rootfs (const char *rootfs_dir, const char *layer_dir, csr_error **err)
{
  const char *slash = strrchr (rootfs_dir, '/');
  if (slash == NULL || slash == rootfs_dir || slash[1] == '\0')
    return layer_dir ? csr_error_set (err, EINVAL, "rootfs %s: no place for a layer", rootfs_dir)
                     : 0;
  cleanup_free char *parent = strndup (rootfs_dir, (size_t)(slash - rootfs_dir));
  if (parent == NULL)
    return csr_error_errno (err, "copy the rootfs path");
  size_t plen = strlen (parent);
  bool layer_below = layer_dir && strncmp (layer_dir, parent, plen) == 0 && layer_dir[plen] == '/';
  cleanup_close int pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (layer_dir == NULL && (pfd < 0 || !empty_dir_at (pfd, ".empty")))
    return 0;
  if (layer_dir && layer_below && pfd < 0)
    return csr_error_errno (err, "open %s", parent);
  cleanup_close int fsfd = fsopen ("overlay", FSOPEN_CLOEXEC);
  if (fsfd < 0)
    return layer_dir ? csr_error_errno (err, "overlayfs (needed by --with)") : 0;
  char lower[PATH_MAX];
  size_t n;
  if (layer_dir == NULL)
    n = (size_t)snprintf (lower, sizeof lower, "/%s:/.empty", slash + 1);
  else if (layer_below)
    n = (size_t)snprintf (lower, sizeof lower, "%s:/%s", layer_dir + plen, slash + 1);
  else
    n = (size_t)snprintf (lower, sizeof lower, "%s:%s", layer_dir, rootfs_dir);
  bool bad = strpbrk (slash + 1, ":,\\") != NULL
             || (layer_dir && strpbrk (layer_dir, ":,\\") != NULL)
             || (layer_dir && !layer_below && strpbrk (rootfs_dir, ":,\\") != NULL);
  if (n >= sizeof lower || bad)
    return layer_dir
               ? csr_error_set (err, EINVAL, "the layer %s: a path overlayfs can't take", layer_dir)
               : 0;
  cleanup_close int oldroot = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (oldroot < 0)
    return csr_error_errno (err, "open /");
  bool chrooted = layer_dir == NULL || layer_below;
  /* The layers are resolved (and recorded) inside the chroot. */
  if (chrooted && (fchdir (pfd) < 0 || chroot (".") < 0))
    return layer_dir ? csr_error_errno (err, "chroot into %s", parent) : 0;
  int rc = fsconfig (fsfd, FSCONFIG_SET_STRING, "lowerdir", lower, 0);
  if (rc == 0)
    rc = fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0);
  int saved = errno;
  if (chrooted && (fchdir (oldroot) < 0 || chroot (".") < 0 || chdir ("/") < 0))
    return csr_error_errno (err, "leave the chroot of the rootfs' parent");
  errno = saved;
  if (rc < 0)
    return layer_dir ? csr_error_errno (err, "mount the overlay of the layer %s", layer_dir) : 0;
  cleanup_close int mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY);
  if (mfd < 0)
    return layer_dir ? csr_error_errno (err, "mount the overlay of the layer %s", layer_dir) : 0;
  if (move_mount (mfd, "", AT_FDCWD, NEWROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0)
    return csr_error_errno (err, "attach the rootfs overlay");
  return 1;
}

int
csr_mounts_bind_rootfs (const char *rootfs_dir, const char *layer_dir, int rootfs_fd,
                        csr_error **err)
{
  /* Nothing we do here propagates back to the host. */
  if (do_mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL, err) < 0)
    return -1;
  int rc = overlay_rootfs (rootfs_dir, layer_dir, err);
  if (rc != 0)
    return rc < 0 ? -1 : 0;
  char src[64];
  snprintf (src, sizeof src, "/proc/self/fd/%d", rootfs_fd);
  if (mount (src, NEWROOT, NULL, MS_BIND, NULL) < 0)
    return csr_error_errno (err, "bind-mount the rootfs");
  return 0;
}

int
csr_mounts_setup (const struct jail_snippet *spec, const int *bind_fds, csr_error **err)
{
  cleanup_close int rootfd = open (NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return csr_error_errno (err, "open the new root");
  if (setup_proc (rootfd, spec->zygote, err) < 0 || setup_dev (rootfd, err) < 0)
    return -1;
  if (setup_tmpfs (rootfd, "tmp", "1777", spec, err) < 0)
    return -1;
  const char *cwd = spec->cwd ? spec->cwd : "/work";
  /* issue 15: a sandbox keeps its working directory on its layer. */
  if (strcmp (cwd, "/tmp") != 0 && spec->layer_upper == NULL
      && setup_tmpfs (rootfd, cwd + 1, "0755", spec, err) < 0)
    return -1;
  /* --mount: the host directories opened earlier (binds.c). */
  if (csr_binds_attach (spec, bind_fds, NEWROOT, err) < 0)
    return -1;
  if (pivot (err) < 0)
    return -1;
  if (!spec->rootfs_writable && restrict_mount ("/", MS_RDONLY | MS_NOSUID | MS_NODEV, err) < 0)
    return csr_error_wrap (err, "make the rootfs read-only");
  return 0;
}

int
csr_mounts_write_files (const struct jail_snippet *spec, csr_error **err)
{
  for (size_t i = 0; i < spec->n_files; i++)
    {
      const struct csr_file *f = &spec->files[i];
      cleanup_close int fd = open (f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                                   f->mode ? f->mode : 0644);
      if (fd < 0)
        return csr_error_errno (err, "create %s", f->path);
      if (csr_write_all (fd, f->data, f->len, err) < 0)
        return csr_error_wrap (err, "write %s", f->path);
    }
  return 0;
}
