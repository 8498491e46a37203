/* csrun — a checkpoint's archive, the reading side (checkpoint.h): the spec,
 * and the layer written back into a new sandbox's upper/.  The archive is
 * treated as hostile (its digest was checked, but a forged one can carry a
 * good digest): only zstd + tar, spec.json first, then names under upper/
 * without "..", "." or an absolute start, regular files, directories,
 * symlinks, FIFOs, whiteouts (0/0 character devices) and hard links to
 * regular files already written, user.* extended attributes only; every
 * path is resolved beneath the layer without following a symlink
 * (util/pack.h csr_beneath_parent).  Then sessions/NAME: regular files
 * named as sessions are, at most CSR_CKPT_MAX_SESSIONS of them, each at
 * most CSR_CKPT_SESSION_MAX bytes, written (not read: they are pickles, for
 * the sessions of the new sandbox) into a directory of the keeper's. */
#include "config.h"
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../util/archive-lib.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/pack.h"
#include "run.h"

#define SPEC_MAX (1 << 20)

/* An error that makes the checkpoint unusable (FMT a literal). */
#define damaged(err, ...)                                                                          \
  csr_error_set ((err), CSR_CKPT_E_DAMAGED, "the checkpoint is damaged: " __VA_ARGS__)

/* A reader of ARCHIVE_FD from its start: zstd and tar, nothing else. */
static struct archive *
open_reader (int archive_fd, csr_error **err)
{
  if (csr_la_load (err) < 0)
    return NULL;
  if (lseek (archive_fd, 0, SEEK_SET) < 0)
    {
      csr_error_errno (err, "the checkpoint's archive");
      return NULL;
    }
  struct archive *a = csr_la.archive_read_new ();
  if (a == NULL)
    {
      csr_error_set (err, ENOMEM, "libarchive");
      return NULL;
    }
  if (csr_la.archive_read_support_filter_zstd (a) != ARCHIVE_OK
      || csr_la.archive_read_support_format_tar (a) != ARCHIVE_OK
      || csr_la.archive_read_open_fd (a, archive_fd, 256 * 1024) != ARCHIVE_OK)
    {
      damaged (err, "not a zstd tar (%s)",
               csr_la.archive_error_string (a) ? csr_la.archive_error_string (a) : "?");
      csr_la.archive_read_free (a);
      return NULL;
    }
  return a;
}

static int
la_damaged (struct archive *a, const char *where, csr_error **err)
{
  const char *m = csr_la.archive_error_string (a);
  return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                        "the checkpoint is damaged: %s: %s (truncated or not a csrun checkpoint)",
                        where, m ? m : "invalid archive");
}

/* The first member, which must be spec.json: its text. */
static int
read_spec_member (struct archive *a, char **text, size_t *len, csr_error **err)
{
  struct archive_entry *e;
  int r = csr_la.archive_read_next_header (a, &e);
  if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
    return la_damaged (a, "its first member", err);
  const char *name = csr_la.archive_entry_pathname (e);
  int64_t size = csr_la.archive_entry_size (e);
  if (name == NULL || strcmp (name, "spec.json") != 0
      || csr_la.archive_entry_filetype (e) != AE_IFREG || size < 0 || size > SPEC_MAX)
    return damaged (err, "its first member is not spec.json");
  char *buf = malloc ((size_t)size + 1);
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "spec.json");
  la_ssize_t n = csr_la.archive_read_data (a, buf, (size_t)size);
  if (n != (la_ssize_t)size)
    {
      free (buf);
      return la_damaged (a, "spec.json", err);
    }
  buf[size] = '\0';
  *text = buf;
  *len = (size_t)size;
  return 0;
}

int
csr_ckpt_read_spec (int archive_fd, struct csr_ckpt_spec *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  cleanup_la_read struct archive *a = open_reader (archive_fd, err);
  if (a == NULL)
    return -1;
  cleanup_free char *text = NULL;
  size_t len;
  if (read_spec_member (a, &text, &len, err) < 0)
    return -1;
  if (csr_ckpt_spec_parse (text, len, c, err) < 0)
    {
      csr_ckpt_spec_release (c);
      return -1;
    }
  return 0;
}

/* ------------------------------------------------------------ unpack */

struct dir_time
{
  char *rel; /* "" for the layer's top */
  struct timespec mtime;
};

struct unpacker
{
  struct archive *a;
  struct archive_entry *e;
  int upperfd;
  struct csr_ckpt_stats *st;
  /* The parent of the last entry, kept for the next (tar order puts the
   * entries of a directory together). */
  char *parent_rel;
  int parent_fd;
  struct dir_time *dirs;
  size_t n_dirs, cap_dirs;
  int sessfd; /* where sessions/NAME go */
  size_t n_sessions;
};

/* The directory that holds REL (under the layer) and REL's last component. */
static int
parent_of (struct unpacker *u, const char *rel, const char **leaf, csr_error **err)
{
  const char *slash = strrchr (rel, '/');
  size_t plen = slash ? (size_t)(slash - rel) : 0;
  if (u->parent_fd >= 0 && strlen (u->parent_rel) == plen
      && strncmp (u->parent_rel, rel, plen) == 0)
    {
      *leaf = slash ? slash + 1 : rel;
      return u->parent_fd;
    }
  csr_error *e = NULL;
  int fd = csr_beneath_parent (u->upperfd, rel, true, 0755, leaf, &e);
  if (fd < 0)
    {
      /* A symlink or a non-directory on the way: a forged archive. */
      damaged (err, "%s: %s", rel, csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  char *pr = strndup (rel, plen);
  if (pr == NULL)
    {
      close (fd);
      return csr_error_set (err, ENOMEM, "restore");
    }
  if (u->parent_fd >= 0)
    close (u->parent_fd);
  free (u->parent_rel);
  u->parent_rel = pr;
  u->parent_fd = fd;
  return fd;
}

/* The entry's extended attributes onto FD (or, FD < 0, PATH).  (pax
 * headers can carry one twice: SCHILY.xattr and LIBARCHIVE.xattr.) */
static int
set_xattrs (struct unpacker *u, int fd, const char *path, const char *rel, csr_error **err)
{
  bool opaque = false;
  const char *name;
  const void *value;
  size_t size;
  csr_la.archive_entry_xattr_reset (u->e);
  while (csr_la.archive_entry_xattr_next (u->e, &name, &value, &size) == ARCHIVE_OK)
    {
      if (name == NULL || strncmp (name, "user.", 5) != 0)
        return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                              "the checkpoint is damaged: %s: extended attribute %s", rel,
                              name ? name : "(none)");
      int r
          = fd >= 0 ? fsetxattr (fd, name, value, size, 0) : lsetxattr (path, name, value, size, 0);
      if (r < 0)
        return csr_error_errno (err, "%s: set the extended attribute %s", rel, name);
      if (strcmp (name, "user.overlay.opaque") == 0)
        opaque = true;
    }
  u->st->opaque += opaque;
  return 0;
}

static int
set_owner_mode (int fd, const struct archive_entry *e, const char *rel, csr_error **err)
{
  if (fchown (fd, csr_la.archive_entry_uid ((struct archive_entry *)e),
              csr_la.archive_entry_gid ((struct archive_entry *)e))
      < 0)
    return csr_error_errno (err, "%s: chown (an owner this sandbox does not map?)", rel);
  if (fchmod (fd, csr_la.archive_entry_perm ((struct archive_entry *)e)) < 0)
    return csr_error_errno (err, "%s: chmod", rel);
  return 0;
}

static struct timespec
entry_mtime (struct archive_entry *e)
{
  return (struct timespec){ (time_t)csr_la.archive_entry_mtime (e),
                            (long)csr_la.archive_entry_mtime_nsec (e) };
}

/* The entry's data into FD: exactly its size (holes left as holes). */
static int
copy_data (struct unpacker *u, int fd, const char *rel, csr_error **err)
{
  const void *buf;
  size_t len;
  la_int64_t off;
  int64_t size = csr_la.archive_entry_size (u->e);
  for (;;)
    {
      int r = csr_la.archive_read_data_block (u->a, &buf, &len, &off);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN || off < 0 || size < 0 || (uint64_t)off + len > (uint64_t)size)
        return la_damaged (u->a, rel, err);
      for (size_t done = 0; done < len;)
        {
          ssize_t w = pwrite (fd, (const char *)buf + done, len - done, off + (off_t)done);
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            return csr_error_errno (err, "write %s", rel);
          done += (size_t)w;
        }
    }
  if (ftruncate (fd, size) < 0)
    return csr_error_errno (err, "write %s", rel);
  return 0;
}

static int
write_contents (struct unpacker *u, int fd, const char *rel, csr_error **err)
{
  if (copy_data (u, fd, rel, err) < 0)
    return -1;
  u->st->bytes += (uint64_t)csr_la.archive_entry_size (u->e);
  return 0;
}

/* sessions/NAME (NAME checked): a regular file, into the directory of the
 * sessions' saves. */
static int
restore_session (struct unpacker *u, const char *name, const char *member, csr_error **err)
{
  int64_t size = csr_la.archive_entry_size (u->e);
  if (csr_la.archive_entry_filetype (u->e) != AE_IFREG || csr_la.archive_entry_hardlink (u->e))
    return damaged (err, "%s: a session's save that is not a file", member);
  if (size < 0 || (uint64_t)size > CSR_CKPT_SESSION_MAX)
    return damaged (err, "%s: a session's save larger than %llu bytes", member,
                    (unsigned long long)CSR_CKPT_SESSION_MAX);
  if (++u->n_sessions > CSR_CKPT_MAX_SESSIONS)
    return damaged (err, "more than %d sessions", CSR_CKPT_MAX_SESSIONS);
  cleanup_close int fd
      = openat (u->sessfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno == EEXIST ? damaged (err, "%s: a duplicate entry", member)
                           : csr_error_errno (err, "create %s", member);
  if (copy_data (u, fd, member, err) < 0)
    return -1;
  if (close (steal_fd (&fd)) < 0)
    return csr_error_errno (err, "close %s", member);
  return 0;
}

static int
restore_file (struct unpacker *u, int pfd, const char *leaf, const char *rel, csr_error **err)
{
  cleanup_close int fd
      = openat (pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno == EEXIST ? damaged (err, "%s: a duplicate entry", rel)
                           : csr_error_errno (err, "create %s", rel);
  struct timespec t[2] = { entry_mtime (u->e), entry_mtime (u->e) };
  if (write_contents (u, fd, rel, err) < 0 || set_owner_mode (fd, u->e, rel, err) < 0
      || set_xattrs (u, fd, NULL, rel, err) < 0)
    return -1;
  if (futimens (fd, t) < 0)
    return csr_error_errno (err, "%s: set its time", rel);
  if (close (steal_fd (&fd)) < 0)
    return csr_error_errno (err, "close %s", rel);
  u->st->files++;
  if (csr_la.archive_entry_sparse_count (u->e) > 0)
    u->st->sparse++;
  return 0;
}

static int
remember_dir (struct unpacker *u, const char *rel)
{
  if (u->n_dirs == u->cap_dirs)
    {
      size_t cap = u->cap_dirs ? u->cap_dirs * 2 : 64;
      struct dir_time *nv = realloc (u->dirs, cap * sizeof *nv);
      if (nv == NULL)
        return -1;
      u->dirs = nv;
      u->cap_dirs = cap;
    }
  char *r = strdup (rel);
  if (r == NULL)
    return -1;
  u->dirs[u->n_dirs++] = (struct dir_time){ r, entry_mtime (u->e) };
  return 0;
}

/* A directory: made, or one made before (its parent, the layer's top). */
static int
restore_dir (struct unpacker *u, int pfd, const char *leaf, const char *rel, csr_error **err)
{
  if (pfd >= 0 && mkdirat (pfd, leaf, 0700) < 0 && errno != EEXIST)
    return csr_error_errno (err, "mkdir %s", rel);
  cleanup_close int fd = pfd >= 0
                             ? openat (pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                             : fcntl (u->upperfd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    return errno == ENOTDIR || errno == ELOOP ? damaged (err, "%s: a duplicate entry", rel)
                                              : csr_error_errno (err, "open %s", rel);
  if (set_owner_mode (fd, u->e, rel, err) < 0 || set_xattrs (u, fd, NULL, rel, err) < 0)
    return -1;
  if (remember_dir (u, pfd >= 0 ? rel : "") < 0)
    return csr_error_set (err, ENOMEM, "restore");
  u->st->dirs++;
  return 0;
}

/* A symlink, a whiteout or a FIFO: made, then owned and timed by name. */
static int
restore_special (struct unpacker *u, int pfd, const char *leaf, const char *rel, csr_error **err)
{
  mode_t type = csr_la.archive_entry_filetype (u->e);
  mode_t perm = csr_la.archive_entry_perm (u->e);
  int r;
  if (type == AE_IFLNK)
    {
      const char *target = csr_la.archive_entry_symlink (u->e);
      if (target == NULL || !*target || strlen (target) >= PATH_MAX)
        return damaged (err, "%s: a symlink without a target", rel);
      r = symlinkat (target, pfd, leaf);
      u->st->symlinks++;
    }
  else if (type == AE_IFCHR)
    {
      if (csr_la.archive_entry_rdevmajor (u->e) != 0 || csr_la.archive_entry_rdevminor (u->e) != 0)
        return damaged (err, "%s: a device node (only whiteouts)", rel);
      r = mknodat (pfd, leaf, S_IFCHR | (perm & 0777), makedev (0, 0));
      u->st->whiteouts++;
    }
  else
    {
      r = mkfifoat (pfd, leaf, perm & 0777);
      u->st->fifos++;
    }
  if (r < 0)
    return errno == EEXIST ? damaged (err, "%s: a duplicate entry", rel)
                           : csr_error_errno (err, "create %s", rel);
  if (fchownat (pfd, leaf, csr_la.archive_entry_uid (u->e), csr_la.archive_entry_gid (u->e),
                AT_SYMLINK_NOFOLLOW)
      < 0)
    return csr_error_errno (err, "%s: chown (an owner this sandbox does not map?)", rel);
  char proc[64 + PATH_MAX];
  snprintf (proc, sizeof proc, "/proc/self/fd/%d/%s", pfd, leaf);
  if (type != AE_IFLNK && fchmodat (pfd, leaf, perm, 0) < 0)
    return csr_error_errno (err, "%s: chmod", rel);
  if (set_xattrs (u, -1, proc, rel, err) < 0)
    return -1;
  struct timespec t[2] = { entry_mtime (u->e), entry_mtime (u->e) };
  if (utimensat (pfd, leaf, t, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "%s: set its time", rel);
  return 0;
}

/* A hard link to TARGET (an archive name), a regular file already in the
 * layer. */
static int
restore_hardlink (struct unpacker *u, int pfd, const char *leaf, const char *rel,
                  const char *target, csr_error **err)
{
  if (strncmp (target, "upper/", 6) != 0 || !csr_pack_path_ok (target + 6))
    return damaged (err, "%s: a hard link out of the layer", rel);
  const char *tleaf;
  csr_error *e = NULL;
  cleanup_close int tpfd = csr_beneath_parent (u->upperfd, target + 6, false, 0, &tleaf, &e);
  struct stat st;
  bool ok
      = tpfd >= 0 && fstatat (tpfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode);
  csr_error_free (e);
  if (!ok)
    return damaged (err, "%s: a hard link to no file of the layer", rel);
  if (linkat (tpfd, tleaf, pfd, leaf, 0) < 0)
    return errno == EEXIST ? damaged (err, "%s: a duplicate entry", rel)
                           : csr_error_errno (err, "link %s", rel);
  u->st->hardlinks++;
  return 0;
}

/* NAME (an archive name) checked: *REL its path in the layer ("" for the
 * top), or 1 for sessions/NAME (*REL the session's name). */
static int
check_name (const char *name, bool is_dir, char *buf, size_t bufsz, const char **rel,
            csr_error **err)
{
  size_t n = name ? strlen (name) : 0;
  if (n == 0 || n >= bufsz)
    return damaged (err, "an entry with no name or a long one");
  memcpy (buf, name, n + 1);
  if (is_dir && n > 1 && buf[n - 1] == '/')
    buf[--n] = '\0';
  if (strcmp (buf, "upper") == 0)
    {
      *rel = "";
      return 0;
    }
  if (strncmp (buf, "upper/", 6) == 0 && csr_pack_path_ok (buf + 6))
    {
      *rel = buf + 6;
      return 0;
    }
  if (strncmp (buf, "sessions/", 9) == 0 && csr_sbx_session_name_ok (buf + 9))
    {
      *rel = buf + 9;
      return 1;
    }
  return csr_error_set (err, CSR_CKPT_E_DAMAGED,
                        "the checkpoint is damaged: an entry outside the layer: '%.200s'", name);
}

static int
unpack_entry (struct unpacker *u, csr_error **err)
{
  mode_t type = csr_la.archive_entry_filetype (u->e);
  const char *hl = csr_la.archive_entry_hardlink (u->e);
  char buf[PATH_MAX + 8];
  const char *rel;
  int c = check_name (csr_la.archive_entry_pathname (u->e), type == AE_IFDIR && !hl, buf,
                      sizeof buf, &rel, err);
  if (c < 0)
    return -1;
  if (c == 1)
    return restore_session (u, rel, buf, err);
  if (*rel == '\0')
    return type == AE_IFDIR && !hl ? restore_dir (u, -1, NULL, "upper", err)
                                   : damaged (err, "upper is not a directory");
  const char *leaf;
  int pfd = parent_of (u, rel, &leaf, err);
  if (pfd < 0)
    return -1;
  if (hl)
    return restore_hardlink (u, pfd, leaf, rel, hl, err);
  switch (type)
    {
    case AE_IFREG:
      return restore_file (u, pfd, leaf, rel, err);
    case AE_IFDIR:
      return restore_dir (u, pfd, leaf, rel, err);
    case AE_IFLNK:
    case AE_IFCHR:
    case AE_IFIFO:
      return restore_special (u, pfd, leaf, rel, err);
    default:
      return damaged (err, "%s: a device node or socket", rel);
    }
}

/* Remove everything in the directory FD. */
static int
empty_dir (int fd, csr_error **err)
{
  DIR *d = csr_fdopendir_or_close (fcntl (fd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return csr_error_errno (err, "read the layer");
  struct dirent *de;
  int rc = 0;
  while (rc == 0 && (de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      char path[64 + NAME_MAX];
      snprintf (path, sizeof path, "/proc/self/fd/%d/%s", fd, de->d_name);
      rc = csr_rm_rf (path, err);
    }
  closedir (d);
  return rc;
}

/* The directories' times, deepest first (their entries changed them). */
static int
set_dir_times (struct unpacker *u, csr_error **err)
{
  for (size_t i = u->n_dirs; i-- > 0;)
    {
      struct timespec t[2] = { u->dirs[i].mtime, u->dirs[i].mtime };
      const char *rel = u->dirs[i].rel;
      if (*rel == '\0')
        {
          if (futimens (u->upperfd, t) < 0)
            return csr_error_errno (err, "upper: set its time");
          continue;
        }
      const char *leaf;
      cleanup_close int pfd = csr_beneath_parent (u->upperfd, rel, false, 0, &leaf, err);
      if (pfd < 0 || utimensat (pfd, leaf, t, AT_SYMLINK_NOFOLLOW) < 0)
        return pfd < 0 ? -1 : csr_error_errno (err, "%s: set its time", rel);
    }
  return 0;
}

int
csr_ckpt_unpack (int archive_fd, int upperfd, int sessfd, struct csr_ckpt_stats *st,
                 csr_error **err)
{
  cleanup_la_read struct archive *a = open_reader (archive_fd, err);
  if (a == NULL)
    return -1;
  struct unpacker u = { .a = a, .upperfd = upperfd, .st = st, .parent_fd = -1, .sessfd = sessfd };
  cleanup_free char *spec = NULL;
  size_t len;
  int rc = read_spec_member (a, &spec, &len, err);
  if (rc == 0)
    rc = empty_dir (upperfd, err);
  bool any = false;
  while (rc == 0)
    {
      int r = csr_la.archive_read_next_header (a, &u.e);
      if (r == ARCHIVE_EOF)
        break;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
        {
          rc = la_damaged (a, any ? "after its last good entry" : "its layer", err);
          break;
        }
      any = true;
      rc = unpack_entry (&u, err);
    }
  if (rc == 0)
    rc = set_dir_times (&u, err);
  if (u.parent_fd >= 0)
    close (u.parent_fd);
  free (u.parent_rel);
  for (size_t i = 0; i < u.n_dirs; i++)
    free (u.dirs[i].rel);
  free (u.dirs);
  return rc;
}
