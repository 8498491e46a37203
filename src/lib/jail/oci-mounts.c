/* csrun — the mount tree of an OCI container: the bundle's rootfs, the
 * config's mounts (targets resolved inside the rootfs, never through a
 * symlink out of it), devices, pivot_root, masked and read-only paths. */
#include "config.h"
#include "oci-mounts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../cgroup/mountinfo.h"
#include "../oci/oci-config.h"
#include "../oci/validate.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/syscalls.h"
#include "mounts.h"
#include "oci-premount.h"

struct mount_opt
{
  const char *name;
  bool clear;
  unsigned long flag;
};

static const struct mount_opt mount_opts[] = {
  { "ro", false, MS_RDONLY },
  { "rw", true, MS_RDONLY },
  { "nosuid", false, MS_NOSUID },
  { "suid", true, MS_NOSUID },
  { "nodev", false, MS_NODEV },
  { "dev", true, MS_NODEV },
  { "noexec", false, MS_NOEXEC },
  { "exec", true, MS_NOEXEC },
  { "sync", false, MS_SYNCHRONOUS },
  { "async", true, MS_SYNCHRONOUS },
  { "dirsync", false, MS_DIRSYNC },
  { "remount", false, MS_REMOUNT },
  { "mand", false, MS_MANDLOCK },
  { "nomand", true, MS_MANDLOCK },
  { "atime", true, MS_NOATIME },
  { "noatime", false, MS_NOATIME },
  { "diratime", true, MS_NODIRATIME },
  { "nodiratime", false, MS_NODIRATIME },
  { "relatime", false, MS_RELATIME },
  { "norelatime", true, MS_RELATIME },
  { "strictatime", false, MS_STRICTATIME },
  { "nostrictatime", true, MS_STRICTATIME },
  { "bind", false, MS_BIND },
  { "rbind", false, MS_BIND | MS_REC },
};

static const struct mount_opt propagation_opts[] = {
  { "private", false, MS_PRIVATE },       { "rprivate", false, MS_PRIVATE | MS_REC },
  { "shared", false, MS_SHARED },         { "rshared", false, MS_SHARED | MS_REC },
  { "slave", false, MS_SLAVE },           { "rslave", false, MS_SLAVE | MS_REC },
  { "unbindable", false, MS_UNBINDABLE }, { "runbindable", false, MS_UNBINDABLE | MS_REC },
};

/* Options we accept and ignore (other runtimes' extensions), or apply
 * apart (the recursive ones: recursive_attrs). */
static const char *const ignored_opts[] = { "tmpcopyup",
                                            "notmpcopyup",
                                            "copy-symlink",
                                            "z",
                                            "Z",
                                            "idmap",
                                            "ridmap",
                                            "rro",
                                            "rrw",
                                            "rnosuid",
                                            "rsuid",
                                            "rnodev",
                                            "rdev",
                                            "rnoexec",
                                            "rexec",
                                            "rnoatime",
                                            "ratime",
                                            "rrelatime",
                                            "rnorelatime",
                                            "rstrictatime",
                                            "rnostrictatime",
                                            "rnodiratime",
                                            "rdiratime",
                                            "rnosymfollow",
                                            "rsymfollow",
                                            "nosymfollow",
                                            "symfollow" };

/* runc's recursive options (rro, rnosuid, rnodev, rnoexec): the flags to
 * set on the mount and every mount below it (mount_setattr AT_RECURSIVE). */
static unsigned long
recursive_attrs (const struct oci_mount *m)
{
  static const struct mount_opt rec[] = {
    { "rro", false, MS_RDONLY },     { "rrw", true, MS_RDONLY },    { "rnosuid", false, MS_NOSUID },
    { "rsuid", true, MS_NOSUID },    { "rnodev", false, MS_NODEV }, { "rdev", true, MS_NODEV },
    { "rnoexec", false, MS_NOEXEC }, { "rexec", true, MS_NOEXEC },
  };
  unsigned long f = 0;
  for (size_t i = 0; i < m->n_options; i++)
    for (size_t k = 0; k < sizeof rec / sizeof rec[0]; k++)
      if (strcmp (m->options[i], rec[k].name) == 0)
        f = rec[k].clear ? f & ~rec[k].flag : f | rec[k].flag;
  return f;
}

struct parsed_mount
{
  unsigned long flags;
  unsigned long propagation;
  char data[1024];
};

static const struct mount_opt *
find_opt (const struct mount_opt *t, size_t n, const char *name)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (t[i].name, name) == 0)
      return &t[i];
  return NULL;
}

int
csr_oci_parse_mount_options (char *const *options, size_t n, unsigned long *flags,
                             unsigned long *propagation, char *data, size_t data_size,
                             csr_error **err)
{
  *flags = 0;
  *propagation = 0;
  data[0] = '\0';
  size_t used = 0;
  for (size_t i = 0; i < n; i++)
    {
      const char *o = options[i];
      const struct mount_opt *m
          = find_opt (mount_opts, sizeof mount_opts / sizeof mount_opts[0], o);
      if (m)
        {
          if (m->clear)
            *flags &= ~m->flag;
          else
            *flags |= m->flag;
          continue;
        }
      m = find_opt (propagation_opts, sizeof propagation_opts / sizeof propagation_opts[0], o);
      if (m)
        {
          *propagation = m->flag;
          continue;
        }
      bool ignored = false;
      for (size_t k = 0; k < sizeof ignored_opts / sizeof ignored_opts[0]; k++)
        ignored = ignored || strcmp (o, ignored_opts[k]) == 0;
      if (ignored)
        continue;
      size_t len = strlen (o);
      if (used + len + 2 > data_size)
        return csr_error_set (err, E2BIG, "mount options too long");
      if (used)
        data[used++] = ',';
      memcpy (data + used, o, len + 1);
      used += len;
    }
  return 0;
}

static long
openat2_in_root (int rootfd, const char *path, int flags)
{
  struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return syscall (SYS_openat2, rootfd, path, &how, sizeof how);
}

/* The first component of DEST (relative to ROOTFD) that is a symlink, as
 * "/dev is a symlink to /", into BUF; "" when none is. */
static void
describe_symlink (int rootfd, const char *dest, char *buf, size_t size)
{
  buf[0] = '\0';
  char path[PATH_MAX];
  if (snprintf (path, sizeof path, "%s", dest) >= (int)sizeof path)
    return;
  for (char *p = path;; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char saved = *p;
      *p = '\0';
      char *slash = strrchr (path, '/');
      const char *name = slash ? slash + 1 : path;
      int parent = -1;
      if (slash)
        {
          *slash = '\0';
          parent = (int)openat2_in_root (rootfd, path[0] ? path : ".", O_PATH);
          *slash = '/';
        }
      else
        parent = (int)openat2_in_root (rootfd, ".", O_PATH);
      char target[PATH_MAX];
      ssize_t n
          = parent >= 0 && name[0] ? readlinkat (parent, name, target, sizeof target - 1) : -1;
      if (parent >= 0)
        close (parent);
      if (n >= 0)
        {
          target[n] = '\0';
          snprintf (buf, size, ": /%.1024s is a symlink to %.1024s in the rootfs", path, target);
          return;
        }
      *p = saved;
      if (saved == '\0')
        return;
    }
}

/* The mount target DEST inside ROOTFD, created when missing (a directory, or
 * an empty file when FILE): an O_PATH fd.  Symlinks in DEST resolve inside
 * the rootfs, never out of it; a target that resolves to the rootfs's root
 * itself (dev -> / in the rootfs) is an error naming the symlink: nothing is
 * ever mounted over the container's root. */
static int open_target_at (int rootfd, const char *dest, bool file, int depth, csr_error **err);

static int
open_target (int rootfd, const char *dest, bool file, csr_error **err)
{
  int fd = open_target_at (rootfd, dest, file, 0, err);
  if (fd < 0)
    return -1;
  struct stat a, b;
  if (fstat (fd, &a) < 0 || fstat (rootfd, &b) < 0)
    {
      csr_error_errno (err, "mount target %s", dest);
      close (fd);
      return -1;
    }
  if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
    {
      char why[2200];
      const char *rel = dest;
      while (*rel == '/')
        rel++;
      describe_symlink (rootfd, rel, why, sizeof why);
      close (fd);
      return csr_error_set (err, 0, "mount target %s resolves to the container's root%s", dest,
                            why);
    }
  return fd;
}

/* PATH's component NAME (in PFD, which is PATH's parent) is a dangling
 * symlink: the target, made where the link points inside the rootfs (crun),
 * with REST (the components after NAME, or NULL) after it. */
static int
follow_dangling (int rootfd, int pfd, char *path, const char *name, const char *rest, bool file,
                 int depth, csr_error **err)
{
  char link[PATH_MAX];
  ssize_t n = readlinkat (pfd, name, link, sizeof link - 1);
  if (n < 0)
    return -1;
  link[n] = '\0';
  if (depth >= 40)
    return csr_error_set (err, ELOOP, "mount target /%s", path);
  size_t plen = (size_t)(name - path);
  char next[PATH_MAX];
  int w = snprintf (next, sizeof next, "%.*s%s%s%s", link[0] == '/' ? 0 : (int)plen, path, link,
                    rest ? "/" : "", rest ? rest : "");
  if (w < 0 || (size_t)w >= sizeof next)
    return csr_error_set (err, ENAMETOOLONG, "mount target /%s", path);
  return open_target_at (rootfd, next, file, depth + 1, err);
}

static int
open_target_at (int rootfd, const char *dest, bool file, int depth, csr_error **err)
{
  while (*dest == '/')
    dest++;
  if (*dest == '\0')
    return (int)openat2_in_root (rootfd, ".", O_PATH);
  char path[PATH_MAX];
  if (snprintf (path, sizeof path, "%s", dest) >= (int)sizeof path)
    return csr_error_set (err, ENAMETOOLONG, "mount target /%s", dest);
  size_t len = strlen (path);
  while (len > 1 && path[len - 1] == '/')
    path[--len] = '\0';
  /* Make every missing component below the root, one at a time. */
  for (char *p = path;; p++)
    {
      bool last = *p == '\0';
      if (*p != '/' && !last)
        continue;
      char saved = *p;
      *p = '\0';
      long fd = openat2_in_root (rootfd, path, O_PATH);
      if (fd < 0 && errno == ENOENT)
        {
          char *slash = strrchr (path, '/');
          const char *name = slash ? slash + 1 : path;
          int parent = slash ? (*slash = '\0', (int)openat2_in_root (rootfd, path, O_PATH)) : -1;
          if (slash)
            *slash = '/';
          int pfd = slash ? parent : (int)openat2_in_root (rootfd, ".", O_PATH);
          if (pfd < 0)
            return csr_error_errno (err, "mount target /%s", path);
          int rc;
          if (last && file)
            {
              rc = openat (pfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
              if (rc >= 0)
                close (rc);
            }
          else
            rc = mkdirat (pfd, name, 0755);
          if (rc < 0 && errno != EEXIST)
            {
              close (pfd);
              return csr_error_errno (err, "create mount target /%s", path);
            }
          fd = openat2_in_root (rootfd, path, O_PATH);
          if (fd < 0 && errno == ENOENT)
            {
              /* A symlink to nothing yet: make what it points to. */
              int r = follow_dangling (rootfd, pfd, path, name, last ? NULL : p + 1, file, depth,
                                       err);
              close (pfd);
              if (r >= 0 || (err && *err))
                return r;
              errno = ENOENT;
            }
          else
            close (pfd);
        }
      if (fd < 0)
        return csr_error_errno (err, "mount target /%s", path);
      if (last)
        return (int)fd;
      close ((int)fd);
      *p = saved;
    }
}

static int
mount_at (const char *src, int fd, const char *dest, const char *type, unsigned long flags,
          const char *data, csr_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  if (mount (src, path, type, flags, data) < 0)
    return csr_error_errno (err, "mount %s on %s", type ? type : (src ? src : "none"), dest);
  return 0;
}

/* Move the detached mount TREE (closed) onto the target FD. */
static int
move_detached (int tree, int fd, const char *dest, csr_error **err)
{
  int rc = move_mount (tree, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
  int saved = errno;
  close (tree);
  if (rc < 0)
    return csr_error_set (err, saved, "mount %s", dest);
  return 0;
}

/* A bind mount of M's source (or of PRE, a detached clone of it that csrun
 * create made as the host's root: see oci-premount.c; closed here). */
static int
bind_mount (const struct oci_mount *m, const char *bundle, int rootfd, unsigned long flags,
            unsigned long propagation, int pre, bool tree, csr_error **err)
{
  char src[PATH_MAX];
  if (m->source == NULL)
    {
      if (pre >= 0)
        close (pre);
      return csr_error_set (err, EINVAL, "bind mount on %s has no source", m->destination);
    }
  if (m->source[0] == '/' || bundle == NULL)
    snprintf (src, sizeof src, "%s", m->source);
  else
    snprintf (src, sizeof src, "%s/%s", bundle, m->source);
  struct stat st;
  if ((pre >= 0 ? fstat (pre, &st) : stat (src, &st)) < 0)
    {
      int saved = errno;
      if (pre >= 0)
        close (pre);
      return csr_error_set (err, saved, "bind mount source %s", src);
    }
  cleanup_close int fd = open_target (rootfd, m->destination, !S_ISDIR (st.st_mode), err);
  if (fd < 0)
    {
      if (pre >= 0)
        close (pre);
      return -1;
    }
  if (pre >= 0 ? move_detached (pre, fd, m->destination, err)
               : mount_at (src, fd, m->destination, NULL, MS_BIND | (flags & MS_REC), NULL, err))
    return -1;
  /* The flags of a bind mount take a remount of the new mount. */
  cleanup_close int fd2 = open_target (rootfd, m->destination, false, err);
  if (fd2 < 0)
    return -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd2);
  /* TREE: the flags on every mount of an rbind (csrun's own binds); a
   * config's "rbind,ro" is read-only on top only, as in runc (rro: all). */
  unsigned long want = flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
  if (want
      && ((tree && (flags & MS_REC)) ? csr_mounts_restrict_tree (path, want, err)
                                     : csr_mounts_restrict (path, want, err))
             < 0)
    return csr_error_wrap (err, "%s", m->destination);
  if (propagation && mount (NULL, path, NULL, propagation, NULL) < 0)
    return csr_error_errno (err, "propagation of %s", m->destination);
  return 0;
}

/* ------------------------------------------------------------ cgroups */

#define CG_HOST "/sys/fs/cgroup"
#define CG_RO (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* Our own cgroup (from /proc/self/cgroup) in the hierarchy whose mount has
 * super options OPTS ("rw,memory" or "rw,name=systemd"); V2: the cgroup2
 * line.  Malloc'ed path, or NULL; *CTRLS (when not NULL) gets the line's
 * controllers ("cpu,cpuacct", "name=systemd"), malloc'ed. */
static char *
own_cgroup (const char *opts, bool v2, char **ctrls_out)
{
  cleanup_file FILE *f = fopen ("/proc/self/cgroup", "re");
  if (f == NULL)
    return NULL;
  char line[4096];
  while (fgets (line, sizeof line, f))
    {
      line[strcspn (line, "\n")] = '\0';
      char *c1 = strchr (line, ':');
      char *c2 = c1 ? strchr (c1 + 1, ':') : NULL;
      if (c2 == NULL)
        continue;
      *c2 = '\0';
      const char *ctrls = c1 + 1;
      if (v2 != (ctrls[0] == '\0'))
        continue;
      if (v2)
        return strdup (c2 + 1);
      /* Every controller of the line must be among the mount's options. */
      bool all = true;
      cleanup_free char *copy = strdup (ctrls);
      char *save = NULL;
      for (char *t = copy ? strtok_r (copy, ",", &save) : NULL; t && all;
           t = strtok_r (NULL, ",", &save))
        {
          size_t n = strlen (t);
          const char *p = opts;
          bool found = false;
          while (!found && (p = strstr (p, t)) != NULL)
            {
              found = (p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0');
              p += n;
            }
          all = found;
        }
      if (all && copy)
        {
          if (ctrls_out && (*ctrls_out = strdup (ctrls)) == NULL)
            return NULL;
          return strdup (c2 + 1);
        }
    }
  return NULL;
}

/* Bind HOST_DIR (with what is mounted below it) on DEST in ROOTFD, every
 * mount with FLAGS (MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC). */
static int
bind_cgroup (const char *host_dir, const char *dest, int rootfd, unsigned long flags,
             csr_error **err)
{
  struct oci_mount b = { .destination = (char *)dest, .source = (char *)host_dir };
  return bind_mount (&b, NULL, rootfd, MS_BIND | MS_REC | flags, 0, -1, true, err);
}

/* In a cgroup namespace: a new mount of the hierarchy (cgroup2 when CTRLS is
 * NULL) on DST, which shows the namespace's root, the container's cgroup
 * (runc and crun do the same).  A hierarchy the kernel doesn't have is left
 * out; one a user namespace may not mount is left empty, with a warning. */
static int
mount_cgroup_ns (const char *dst, const char *ctrls, int rootfd, unsigned long flags,
                 csr_error **err)
{
  cleanup_close int fd = open_target (rootfd, dst, false, err);
  if (fd < 0)
    return -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  const char *type = ctrls ? "cgroup" : "cgroup2";
  if (mount (type, path, type, flags, ctrls) == 0)
    return 0;
  if (errno == ENOENT || errno == ENODEV)
    return 0;
  if (errno == EPERM || errno == EACCES)
    {
      csr_warn ("cgroup mount: %s (%s) may not be mounted here (%s): %s left empty", type,
                ctrls ? ctrls : "unified", strerror (errno), dst);
      return 0;
    }
  return csr_error_errno (err, "mount %s (%s) on %s", type, ctrls ? ctrls : "unified", dst);
}

/* One v1 hierarchy (or the hybrid host's unified one), mounted on the host at
 * L, as DEST/<its name>.  Without a cgroup namespace, a bind of our own
 * cgroup there (runc's getCgroupMounts: relative to the mount's root). */
static int
mount_one_hierarchy (const struct csr_mountinfo_entry *l, const char *dest, int rootfd,
                     unsigned long flags, bool cgroupns, csr_error **err)
{
  bool v2 = strcmp (l->fstype, "cgroup2") == 0;
  const char *name = l->mount_point + sizeof CG_HOST;
  cleanup_free char *ctrls = NULL;
  cleanup_free char *own = own_cgroup (l->super_opts, v2, &ctrls);
  if (own == NULL)
    return 0;
  char src[2 * PATH_MAX], dst[2 * PATH_MAX];
  if ((size_t)snprintf (dst, sizeof dst, "%s/%s", dest, name) >= sizeof dst)
    return csr_error_set (err, ENAMETOOLONG, "cgroup mount %s", dest);
  if (cgroupns)
    return mount_cgroup_ns (dst, v2 ? NULL : ctrls, rootfd, flags, err);
  /* OWN is below the mount's root L->root (a mount of a sub-cgroup, as in a
   * container): the rest of it is below the mount point. */
  const char *rel = own;
  size_t rl = strlen (l->root);
  if (strcmp (l->root, "/") != 0)
    {
      if (strncmp (own, l->root, rl) != 0 || (own[rl] != '\0' && own[rl] != '/'))
        return 0;
      rel = own + rl;
    }
  if ((size_t)snprintf (src, sizeof src, "%s%s", l->mount_point, strcmp (rel, "/") == 0 ? "" : rel)
      >= sizeof src)
    return csr_error_set (err, ENAMETOOLONG, "cgroup mount %s", dest);
  struct stat st;
  if (stat (src, &st) < 0 || !S_ISDIR (st.st_mode))
    return 0;
  return bind_cgroup (src, dst, rootfd, flags, err);
}

/* The links between co-mounted hierarchies in the tmpfs at TPATH: the host's
 * (cpu -> cpu,cpuacct), and one per controller of a directory named
 * "a,b" (runc), when missing. */
static void
cgroup_links (const char *tpath)
{
  cleanup_close int dir = open (tpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return;
  cleanup_dir DIR *host = opendir (CG_HOST);
  struct dirent *de;
  while (host && (de = readdir (host)) != NULL)
    {
      char link[PATH_MAX], target[256];
      snprintf (link, sizeof link, CG_HOST "/%s", de->d_name);
      ssize_t n = readlink (link, target, sizeof target - 1);
      if (n <= 0 || memchr (target, '/', (size_t)n))
        continue;
      target[n] = '\0';
      (void)!symlinkat (target, dir, de->d_name);
    }
  int dup = fcntl (dir, F_DUPFD_CLOEXEC, 0);
  cleanup_dir DIR *mine = dup >= 0 ? fdopendir (dup) : NULL;
  if (mine == NULL && dup >= 0)
    close (dup);
  while (mine && (de = readdir (mine)) != NULL)
    {
      if (de->d_type != DT_DIR || strchr (de->d_name, ',') == NULL)
        continue;
      char copy[256];
      snprintf (copy, sizeof copy, "%s", de->d_name);
      char *save = NULL;
      for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
        (void)!symlinkat (de->d_name, dir, t);
    }
}

/* A "cgroup" mount: only the container's own cgroups, read-only unless the
 * mount's options say otherwise (FLAGS: its MS_RDONLY, MS_NOSUID, MS_NODEV,
 * MS_NOEXEC), as runc does.  On a v2 host, its cgroup directory; on a v1 or
 * hybrid host, a tmpfs holding, per hierarchy (the unified one included),
 * its cgroup, and the host's links between co-mounted ones (cpu ->
 * cpu,cpuacct).  In a cgroup namespace (CGROUPNS) each is a new mount of
 * the hierarchy, which shows the namespace's root: the container's cgroup
 * (the host's mounts of them can't be bound: from inside, they are above
 * the namespace's root, and /proc/self/cgroup says "/"). */
static int
mount_cgroups (const struct oci_mount *m, unsigned long flags, bool cgroupns, int rootfd,
               csr_error **err)
{
  const char *dest = m->destination;
  flags &= MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  __attribute__ ((cleanup (csr_mountinfo_release))) struct csr_mountinfo mi = { 0 };
  if (csr_mountinfo_read (&mi, err) < 0)
    return -1;
  bool v2_root = false;
  for (size_t k = 0; k < mi.n; k++)
    if (strcmp (mi.e[k].mount_point, CG_HOST) == 0)
      v2_root = strcmp (mi.e[k].fstype, "cgroup2") == 0;
  if (v2_root)
    {
      if (cgroupns)
        {
          cleanup_close int fd = open_target (rootfd, dest, false, err);
          if (fd < 0)
            return -1;
          char path[64];
          snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
          if (mount ("cgroup2", path, "cgroup2", flags, NULL) < 0)
            return csr_error_errno (err, "mount cgroup2 on %s", dest);
          return 0;
        }
      cleanup_free char *own = own_cgroup ("", true, NULL);
      char src[PATH_MAX];
      snprintf (src, sizeof src, CG_HOST "%s", own && strcmp (own, "/") != 0 ? own : "");
      return bind_cgroup (src, dest, rootfd, flags, err);
    }
  cleanup_close int dfd = open_target (rootfd, dest, false, err);
  if (dfd < 0
      || mount_at ("tmpfs", dfd, dest, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "mode=755,size=64k", err)
             < 0)
    return -1;
  for (size_t k = 0; k < mi.n; k++)
    {
      const struct csr_mountinfo_entry *l = &mi.e[k];
      if ((strcmp (l->fstype, "cgroup") != 0 && strcmp (l->fstype, "cgroup2") != 0)
          || strncmp (l->mount_point, CG_HOST "/", sizeof CG_HOST) != 0
          || strchr (l->mount_point + sizeof CG_HOST, '/') != NULL)
        continue;
      if (mount_one_hierarchy (l, dest, rootfd, flags, cgroupns, err) < 0)
        return -1;
    }
  /* The tmpfs we mounted: a new fd sees it rather than the directory below. */
  cleanup_close int tfd = open_target (rootfd, dest, false, err);
  if (tfd < 0)
    return -1;
  char tpath[64];
  snprintf (tpath, sizeof tpath, "/proc/self/fd/%d", tfd);
  cgroup_links (tpath);
  return (flags & MS_RDONLY) ? csr_mounts_restrict (tpath, CG_RO, err) : 0;
}

/* The mount at DEST (inside ROOTFD) and those below it get FLAGS. */
static int
restrict_tree_at (int rootfd, const char *dest, unsigned long flags, csr_error **err)
{
  cleanup_close int fd = open_target (rootfd, dest, false, err);
  if (fd < 0)
    return -1;
  char path[64];
  snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
  if (csr_mounts_restrict_tree (path, flags, err) < 0)
    return csr_error_wrap (err, "%s", dest);
  return 0;
}

/* DEST (inside ROOTFD) is missing or a directory reached without a symlink. */
static int
check_plain_dir (int rootfd, const char *dest, const char *type, csr_error **err)
{
  while (*dest == '/')
    dest++;
  struct open_how how
      = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS };
  cleanup_close int fd = (int)syscall (SYS_openat2, rootfd, *dest ? dest : ".", &how, sizeof how);
  struct stat st;
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISDIR (st.st_mode))
    return csr_error_set (err, 0, "filesystem \"%s\" must be mounted on ordinary directory (/%s%s)",
                          type, dest, fd < 0 && errno == ELOOP ? " goes through a symlink" : "");
  return 0;
}

/* One entry of config.mounts. */
static int
do_one_mount (const struct oci_mount *m, const char *bundle, int rootfd, int pre, bool cgroupns,
              csr_error **err)
{
  unsigned long flags, propagation;
  char data[1024];
  if (csr_oci_parse_mount_options (m->options, m->n_options, &flags, &propagation, data,
                                   sizeof data, err)
      < 0)
    return csr_error_wrap (err, "mount %s", m->destination);
  const char *type = m->type;
  unsigned long rec = recursive_attrs (m);
  if ((flags & MS_BIND) || (type && strcmp (type, "bind") == 0))
    return bind_mount (m, bundle, rootfd, flags | MS_BIND, propagation, pre, false, err) < 0
                   || (rec && restrict_tree_at (rootfd, m->destination, rec, err) < 0)
               ? -1
               : 0;
  if (pre >= 0)
    close (pre);
  if (type && (strcmp (type, "cgroup") == 0 || strcmp (type, "cgroup2") == 0))
    return mount_cgroups (m, flags, cgroupns, rootfd, err);
  /* proc and sysfs only on a real directory, never through a symlink
   * (runc: CVE-2019-19921's family). */
  if (type && (strcmp (type, "proc") == 0 || strcmp (type, "sysfs") == 0)
      && check_plain_dir (rootfd, m->destination, type, err) < 0)
    return -1;
  cleanup_close int fd = open_target (rootfd, m->destination, false, err);
  if (fd < 0)
    return -1;
  /* A read-only tmpfs is mounted read-write and turned read-only once what
   * goes below it is there (runc: /dev with its nodes and /dev/pts). */
  unsigned long mflags = flags & ~MS_REMOUNT;
  if (type && strcmp (type, "tmpfs") == 0)
    mflags &= ~MS_RDONLY;
  if (mount_at (m->source, fd, m->destination, type, mflags, data[0] ? data : NULL, err) == 0)
    return rec ? restrict_tree_at (rootfd, m->destination, rec, err) : 0;
  /* sysfs in a user namespace that does not own the network namespace:
   * bind the host's /sys read-only instead (what rootless runtimes do). */
  if (type && strcmp (type, "sysfs") == 0 && (errno == EPERM || errno == EACCES))
    {
      csr_error_freep (err);
      struct oci_mount b = *m;
      b.source = (char *)"/sys";
      return bind_mount (&b, NULL, rootfd,
                         MS_BIND | MS_REC | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                         propagation, -1, true, err);
    }
  /* mqueue without a private IPC namespace owner: the same idea. */
  if (type && strcmp (type, "mqueue") == 0 && (errno == EPERM || errno == EACCES))
    {
      csr_error_freep (err);
      struct oci_mount b = *m;
      b.source = (char *)"/dev/mqueue";
      return bind_mount (&b, NULL, rootfd, MS_BIND | MS_REC | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                         propagation, -1, true, err);
    }
  return -1;
}

static const struct
{
  const char *name; /* below /dev */
  unsigned maj, min;
} default_devices[] = {
  { "null", 1, 3 },   { "zero", 1, 5 },    { "full", 1, 7 },
  { "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
};

/* Below the container's /dev (DEVFD), never through a symlink or into
 * another mount: the tmpfs csrun mounted there is the only place device
 * nodes and links are made in. */
static long
openat2_in_dev (int devfd, const char *path, int flags)
{
  struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
                          .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
                                     | RESOLVE_NO_XDEV };
  return syscall (SYS_openat2, devfd, path, &how, sizeof how);
}

/* The directory of REL (below /dev, made when missing): an O_RDONLY fd, and
 * the last component in *NAME. */
static int
dev_parent (int devfd, char *rel, const char **name, csr_error **err)
{
  int dir = (int)openat2_in_dev (devfd, ".", O_RDONLY | O_DIRECTORY);
  if (dir < 0)
    return csr_error_errno (err, "open /dev");
  char *p = rel;
  for (char *slash; (slash = strchr (p, '/')) != NULL; p = slash + 1)
    {
      *slash = '\0';
      if (mkdirat (dir, p, 0755) < 0 && errno != EEXIST)
        {
          csr_error_errno (err, "mkdir /dev/%s", rel);
          *slash = '/';
          close (dir);
          return -1;
        }
      int next = (int)openat2_in_dev (dir, p, O_RDONLY | O_DIRECTORY);
      *slash = '/';
      close (dir);
      if (next < 0)
        return csr_error_errno (err, "device directory /dev/%s", rel);
      dir = next;
    }
  *name = p;
  return dir;
}

/* A device node at /dev/REL: mknod when allowed, else a bind of the host's
 * node of the same path onto an empty file. */
static int
make_device (int devfd, const char *rel, char type, unsigned maj, unsigned min, mode_t perm,
             uid_t uid, gid_t gid, csr_error **err)
{
  mode_t kind = type == 'b' ? S_IFBLK : type == 'p' ? S_IFIFO : S_IFCHR;
  char path[PATH_MAX];
  if (snprintf (path, sizeof path, "%s", rel) >= (int)sizeof path)
    return csr_error_set (err, ENAMETOOLONG, "device /dev/%s", rel);
  const char *name = NULL;
  cleanup_close int dfd = dev_parent (devfd, path, &name, err);
  if (dfd < 0)
    return -1;
  /* The mode asked for, not less (runc clears the umask around it too). */
  mode_t old_mask = umask (0);
  int made = mknodat (dfd, name, kind | perm, makedev (maj, min));
  int saved = errno;
  umask (old_mask);
  errno = saved;
  if (made == 0)
    {
      if (fchownat (dfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 && errno != EPERM
          && errno != EINVAL)
        return csr_error_errno (err, "chown device /dev/%s", rel);
      return 0;
    }
  if (errno == EEXIST)
    return 0;
  if (errno != EPERM)
    return csr_error_errno (err, "mknod /dev/%s", rel);
  int fd = openat (dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return csr_error_errno (err, "device /dev/%s", rel);
  close (fd);
  cleanup_close int target = (int)openat2_in_dev (dfd, name, O_PATH);
  char host[PATH_MAX];
  snprintf (host, sizeof host, "/dev/%s", rel);
  if (target < 0)
    return csr_error_errno (err, "device %s", host);
  return mount_at (host, target, host, NULL, MS_BIND, NULL, err);
}

/* An empty file at /dev/REL, and the detached mount PRE (a node csrun create
 * made: oci-premount.c) moved onto it; PRE is closed. */
static int
place_in_dev (int devfd, const char *rel, int pre, csr_error **err)
{
  char path[PATH_MAX];
  const char *name = NULL;
  if (snprintf (path, sizeof path, "%s", rel) >= (int)sizeof path)
    {
      close (pre);
      return csr_error_set (err, ENAMETOOLONG, "device /dev/%s", rel);
    }
  cleanup_close int dfd = dev_parent (devfd, path, &name, err);
  int fd = dfd < 0 ? -1 : openat (dfd, name, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd >= 0)
    close (fd);
  cleanup_close int target = fd < 0 ? -1 : (int)openat2_in_dev (dfd, name, O_PATH);
  if (target < 0)
    {
      close (pre);
      if (dfd < 0)
        return -1;
      return csr_error_errno (err, "device /dev/%s", rel);
    }
  char dest[PATH_MAX + 8];
  snprintf (dest, sizeof dest, "/dev/%s", rel);
  return move_detached (pre, target, dest, err);
}

/* linux.devices[K] at D->path outside /dev: a node made in the /dev tmpfs
 * under a passing name (or PRE, made by csrun create), bound onto an empty
 * file at its path in the rootfs (created, as mount targets are: never a
 * node in the rootfs's own directory), the passing name removed.  Without
 * mknod, the host's node of the same path is bound (runc). */
static int
place_outside_dev (int rootfd, int devfd, const struct oci_device *d, size_t k, int pre,
                   csr_error **err)
{
  cleanup_close int target = open_target (rootfd, d->path, true, err);
  if (target < 0)
    {
      if (pre >= 0)
        close (pre);
      return -1;
    }
  if (pre >= 0)
    return move_detached (pre, target, d->path, err);
  char tmp[64];
  snprintf (tmp, sizeof tmp, ".csrun-device-%zu", k);
  cleanup_close int ddir = (int)openat2_in_dev (devfd, ".", O_RDONLY | O_DIRECTORY);
  if (ddir < 0)
    return csr_error_errno (err, "open /dev");
  mode_t kind = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
  mode_t old_mask = umask (0);
  int made = mknodat (ddir, tmp, kind | (d->has_file_mode ? (d->file_mode & 07777) : 0666),
                      makedev ((unsigned)d->major, (unsigned)d->minor));
  int saved = errno;
  umask (old_mask);
  if (made < 0 && saved == EPERM)
    return mount_at (d->path, target, d->path, NULL, MS_BIND, NULL, err);
  if (made < 0)
    return csr_error_set (err, saved, "mknod %s", d->path);
  if (fchownat (ddir, tmp, d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, AT_SYMLINK_NOFOLLOW)
          < 0
      && errno != EPERM && errno != EINVAL)
    return csr_error_errno (err, "chown device %s", d->path);
  /* The passing name goes once the node is bound in place (a mount whose
   * root is already unlinked can't be attached). */
  int tree = open_tree (ddir, tmp, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  int rc = tree < 0 ? csr_error_errno (err, "device %s", d->path)
                    : move_detached (tree, target, d->path, err);
  (void)unlinkat (ddir, tmp, 0);
  return rc;
}

/* The default devices, linux.devices (PRE: the nodes csrun create made, or
 * NULL), the /dev links and ptmx, in the tmpfs at DEVFD (a device elsewhere
 * is bound from there onto its path in ROOTFD). */
static int
setup_devices (const struct oci_config *c, int rootfd, int devfd, struct csr_oci_premounts *pre,
               csr_error **err)
{
  for (size_t i = 0; i < sizeof default_devices / sizeof default_devices[0]; i++)
    {
      bool given = false;
      for (size_t k = 0; k < c->n_devices && !given; k++)
        given = strcmp (c->devices[k].path + 5, default_devices[i].name) == 0;
      if (!given
          && make_device (devfd, default_devices[i].name, 'c', default_devices[i].maj,
                          default_devices[i].min, 0666, 0, 0, err)
                 < 0)
        return -1;
    }
  for (size_t k = 0; k < c->n_devices; k++)
    {
      const struct oci_device *d = &c->devices[k];
      int fd = pre ? csr_oci_premounts_take (pre->device_fds, pre->n_devices, k) : -1;
      /* oci_config_validate: a clean absolute path. */
      if (strncmp (d->path, "/dev/", 5) != 0)
        {
          if (place_outside_dev (rootfd, devfd, d, k, fd, err) < 0)
            return -1;
          continue;
        }
      if (fd >= 0
              ? place_in_dev (devfd, d->path + 5, fd, err)
              : make_device (devfd, d->path + 5, d->type == 'u' ? 'c' : d->type, (unsigned)d->major,
                             (unsigned)d->minor, d->has_file_mode ? (d->file_mode & 07777) : 0666,
                             d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, err))
        return -1;
    }
  static const char *const links[][2] = {
    { "/proc/self/fd", "fd" },       { "/proc/self/fd/0", "stdin" },
    { "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
    { "/proc/kcore", "core" },
  };
  cleanup_close int ddir = (int)openat2_in_dev (devfd, ".", O_RDONLY | O_DIRECTORY);
  if (ddir < 0)
    return csr_error_errno (err, "open /dev");
  for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
    if (symlinkat (links[i][0], ddir, links[i][1]) < 0 && errno != EEXIST)
      return csr_error_errno (err, "symlink /dev/%s", links[i][1]);
  /* /dev/ptmx: the devpts instance's, when /dev/pts is one (a ptmx mounted
   * over by the config stays). */
  struct stat st;
  if (fstatat (ddir, "pts/ptmx", &st, 0) == 0
      && (unlinkat (ddir, "ptmx", 0) == 0 || errno == ENOENT)
      && symlinkat ("pts/ptmx", ddir, "ptmx") < 0)
    return csr_error_errno (err, "symlink /dev/ptmx");
  return 0;
}

/* After config.mounts[I] was mounted: when its destination is /dev, *DEVFD
 * becomes that tmpfs (an O_PATH fd of its root), or -1 when it is anything
 * else (a bind of the host's /dev: csrun's /dev set-up is skipped, as runc
 * and crun skip theirs). */
static int
track_dev (const struct oci_mount *m, int rootfd, int *devfd, csr_error **err)
{
  if (!oci_path_is_dev (m->destination))
    return 0;
  if (*devfd >= 0)
    close (*devfd);
  *devfd = -1;
  bool bind = m->type && strcmp (m->type, "bind") == 0;
  for (size_t i = 0; i < m->n_options; i++)
    bind = bind || strcmp (m->options[i], "bind") == 0 || strcmp (m->options[i], "rbind") == 0;
  if (bind || m->type == NULL || strcmp (m->type, "tmpfs") != 0)
    return 0;
  int fd = open_target (rootfd, m->destination, false, err);
  if (fd < 0)
    return -1;
  struct statfs sf;
  if (fstatfs (fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC)
    {
      close (fd);
      return csr_error_set (err, EINVAL, "mount %s: not a tmpfs after mounting one",
                            m->destination);
    }
  *devfd = fd;
  return 0;
}

/* linux.rootfsPropagation as mount flags into *PROP (0: not given). */
static int
rootfs_propagation (const struct oci_config *c, unsigned long *prop, csr_error **err)
{
  *prop = 0;
  if (c->rootfs_propagation == NULL)
    return 0;
  const struct mount_opt *m
      = find_opt (propagation_opts, sizeof propagation_opts / sizeof propagation_opts[0],
                  c->rootfs_propagation);
  if (m == NULL)
    return csr_error_set (err, EINVAL, "linux.rootfsPropagation: unknown value '%s'",
                          c->rootfs_propagation);
  *prop = m->flag;
  return 0;
}

int
csr_oci_mounts_prepare (const struct oci_config *c, const char *rootfs, const char *bundle,
                        struct csr_oci_premounts *pre, csr_error **err)
{
  unsigned long prop;
  if (rootfs_propagation (c, &prop, err) < 0)
    return -1;
  /* Nothing we mount propagates back: every mount becomes a slave (or
   * private, when rprivate is asked for) before the rootfs is bound.  The
   * configured propagation is applied to the container's "/" after
   * pivot_root (csr_oci_mounts_enter), as runc does: a shared "/" here would
   * make pivot_root fail (EINVAL) and propagate the mounts below to the
   * caller's namespace. */
  unsigned long first = prop == (MS_PRIVATE | MS_REC) ? prop : MS_SLAVE | MS_REC;
  if (mount (NULL, "/", NULL, first, NULL) < 0)
    return csr_error_errno (err, "set the propagation of /");
  /* The rootfs must be a mount point of its own for pivot_root. */
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return csr_error_errno (err, "bind the rootfs %s", rootfs);
  cleanup_close int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return csr_error_errno (err, "open the rootfs %s", rootfs);
  cleanup_close int devfd = -1;
  /* The process is in its cgroup namespace already (csr_oci_entry). */
  bool cgroupns = oci_config_has_namespace (c, CLONE_NEWCGROUP, NULL);
  for (size_t i = 0; i < c->n_mounts; i++)
    if (do_one_mount (&c->mounts[i], bundle, rootfd,
                      pre ? csr_oci_premounts_take (pre->mount_fds, pre->n_mounts, i) : -1,
                      cgroupns, err)
            < 0
        || track_dev (&c->mounts[i], rootfd, &devfd, err) < 0)
      return -1;
  if (devfd >= 0 && setup_devices (c, rootfd, devfd, pre, err) < 0)
    return -1;
  /* The read-only tmpfs mounts (mounted read-write: do_one_mount). */
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      const struct oci_mount *m = &c->mounts[i];
      unsigned long flags, propagation;
      char data[1024];
      if (m->type == NULL || strcmp (m->type, "tmpfs") != 0
          || csr_oci_parse_mount_options (m->options, m->n_options, &flags, &propagation, data,
                                          sizeof data, err)
                 < 0
          || (flags & (MS_RDONLY | MS_BIND)) != MS_RDONLY)
        continue;
      cleanup_close int fd = open_target (rootfd, m->destination, false, err);
      char path[64];
      snprintf (path, sizeof path, "/proc/self/fd/%d", fd);
      if (fd < 0 || csr_mounts_restrict (path, MS_RDONLY, err) < 0)
        return csr_error_wrap (err, "make %s read-only", m->destination);
    }
  return 0;
}

/* --no-pivot leaves the old root's mounts below the new one: every procfs
 * and sysfs outside ROOTFS is detached (or, when that is refused, covered
 * by an empty read-only tmpfs), as runc does, so the container can't reach
 * them nor, with a fully visible procfs gone, mount a new one of its own. */
static int
hide_outside_procfs (const char *rootfs, csr_error **err)
{
  __attribute__ ((cleanup (csr_mountinfo_release))) struct csr_mountinfo mi = { 0 };
  if (csr_mountinfo_read (&mi, err) < 0)
    return -1;
  char **paths = NULL;
  size_t n = 0;
  for (size_t k = 0; k < mi.n; k++)
    {
      const struct csr_mountinfo_entry *l = &mi.e[k];
      if ((strcmp (l->fstype, "proc") != 0 && strcmp (l->fstype, "sysfs") != 0)
          || csr_mountinfo_under (l->mount_point, rootfs))
        continue;
      char **grown = realloc (paths, (n + 1) * sizeof *paths);
      if (grown == NULL || (grown[n] = strdup (l->mount_point)) == NULL)
        {
          paths = grown ? grown : paths;
          for (size_t i = 0; i < n; i++)
            free (paths[i]);
          free (paths);
          return csr_error_errno (err, "--no-pivot: the procfs mounts");
        }
      paths = grown;
      n++;
    }
  int rc = 0;
  /* The last mounted first: what is mounted below goes before its parent. */
  for (size_t i = n; i-- > 0;)
    {
      if (rc == 0 && umount2 (paths[i], MNT_DETACH) < 0)
        {
          if (errno != EINVAL && errno != EPERM && errno != ENOENT)
            rc = csr_error_errno (err, "--no-pivot: detach %s", paths[i]);
          else if (errno != ENOENT
                   && mount ("tmpfs", paths[i], "tmpfs",
                             MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555")
                          < 0
                   && errno != ENOENT)
            rc = csr_error_errno (err, "--no-pivot: cover %s", paths[i]);
        }
      free (paths[i]);
    }
  free (paths);
  return rc;
}

int
csr_oci_mounts_enter (const struct oci_config *c, const char *rootfs, bool no_pivot,
                      csr_error **err)
{
  if (chdir (rootfs) < 0)
    return csr_error_errno (err, "chdir %s", rootfs);
  if (no_pivot && hide_outside_procfs (rootfs, err) < 0)
    return -1;
  if (no_pivot)
    {
      if (mount (rootfs, "/", NULL, MS_MOVE, NULL) < 0)
        return csr_error_errno (err, "move the rootfs to /");
      if (chroot (".") < 0)
        return csr_error_errno (err, "chroot");
    }
  else
    {
      if (csr_pivot_root (".", ".") < 0)
        return csr_error_errno (err, "pivot_root");
      if (umount2 (".", MNT_DETACH) < 0)
        return csr_error_errno (err, "detach the old root");
    }
  if (chdir ("/") < 0)
    return csr_error_errno (err, "chdir /");
  /* linux.rootfsPropagation, on the container's own root now (its peers
   * and masters are in this mount namespace only: see prepare). */
  unsigned long prop;
  if (rootfs_propagation (c, &prop, err) < 0)
    return -1;
  if (prop && mount (NULL, "/", NULL, prop, NULL) < 0)
    return csr_error_errno (err, "linux.rootfsPropagation %s", c->rootfs_propagation);
  return 0;
}

int
csr_oci_mounts_finish (const struct oci_config *c, csr_error **err)
{
  for (size_t i = 0; i < c->n_masked_paths; i++)
    if (csr_mounts_mask (c->masked_paths[i], err) < 0)
      return -1;
  for (size_t i = 0; i < c->n_readonly_paths; i++)
    if (csr_mounts_readonly (c->readonly_paths[i], err) < 0)
      return -1;
  if (c->root_readonly && csr_mounts_restrict ("/", MS_RDONLY, err) < 0)
    return csr_error_wrap (err, "make the rootfs read-only");
  return 0;
}
