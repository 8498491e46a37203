/* csrun — the rootfs cache: CACHE_DIR/<sha256> trees unpacked once, under a
 * lock, atomically; CACHE_DIR/by-stat/<dev>-<ino>-<size>-<mtime> symlinks
 * name the tree of a tarball without hashing it again. */
#include "config.h"
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/trust.h"

#include "cache-internal.h"

/* An index temporary older than this was left by a crash. */
#define STALE_INDEX_TMP_SEC 600

static int set_path (char **out, csr_error **err, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int
set_path (char **out, csr_error **err, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (out, fmt, ap);
  va_end (ap);
  if (n < 0)
    {
      *out = NULL;
      return csr_error_errno (err, "cannot allocate a path");
    }
  return 0;
}

int
csr_rootfs_cache_dir_from (char **out, const char **source, csr_error **err)
{
  const char *v = getenv ("CSRUN_CACHE_DIR");
  if (v && *v)
    {
      *source = "CSRUN_CACHE_DIR";
      return set_path (out, err, "%s", v);
    }
  /* The XDG base directory spec says to ignore relative values.  Whatever
   * the route (sudo -E keeps another user's XDG_CACHE_HOME), the directory
   * must then pass csr_trust_open_dir: it is refused, not replaced. */
  v = getenv ("XDG_CACHE_HOME");
  if (v && v[0] == '/')
    {
      *source = "XDG_CACHE_HOME";
      return set_path (out, err, "%s/csrun/rootfs", v);
    }
  *source = "default";
  if (geteuid () == 0)
    return set_path (out, err, "/var/cache/csrun/rootfs");
  v = getenv ("HOME");
  if (v && v[0] == '/')
    {
      *source = "HOME";
      return set_path (out, err, "%s/.cache/csrun/rootfs", v);
    }
  struct passwd *pw = getpwuid (geteuid ());
  if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
    return set_path (out, err, "%s/.cache/csrun/rootfs", pw->pw_dir);
  return csr_error_set (err, 0,
                        "no rootfs cache directory: set CSRUN_CACHE_DIR, XDG_CACHE_HOME or HOME");
}

int
csr_rootfs_cache_dir (char **out, csr_error **err)
{
  const char *source;
  return csr_rootfs_cache_dir_from (out, &source, err);
}

void
csr_rootfs_free (struct csr_rootfs *r)
{
  if (r == NULL)
    return;
  if (r->use_fd >= 0)
    close (r->use_fd);
  free (r->source);
  free (r->dir);
  free (r->sha256);
  free (r);
}

static void
csr_rootfs_freep (struct csr_rootfs **r)
{
  csr_rootfs_free (*r);
}
#define cleanup_rootfs __attribute__ ((cleanup (csr_rootfs_freep)))

/* ---------------------------------------------------------------- cache dir */

struct cache
{
  char *dir; /* canonical absolute path */
  int fd;
};

static void
cache_close (struct cache *c)
{
  free (c->dir);
  if (c->fd >= 0)
    close (c->fd);
}

/* The cache directory, checked by csr_trust_open_dir (owned by us, not
 * writable by group or others, reached through directories nobody else can
 * change) and created 0700: as root the jail opens its tree before it
 * changes its credentials, so nobody else needs to search it. */
static int
cache_open (struct cache *c, const char *path, csr_error **err)
{
  c->fd = csr_trust_open_dir ("rootfs cache", path, 0700, &c->dir, err);
  if (c->fd < 0)
    return -1;
  /* The second, empty layer of the jail's rootfs overlay (see
   * csr_mounts_bind_rootfs); without it the jail binds the tree instead. */
  if (mkdirat (c->fd, EMPTY_DIR, 0755) < 0 && errno != EEXIST)
    csr_debug ("rootfs cache: mkdir '%s/" EMPTY_DIR "': %s", c->dir, strerror (errno));
  return 0;
}

/* A tree that is not ours (or that others can write) does not count. */
static bool
tree_exists (struct cache *c, const char *hex)
{
  struct stat st;
  return fstatat (c->fd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0
         && csr_trust_check_entry (&st, false, hex, NULL) == 0;
}

static bool
is_hex_digest (const char *s, size_t n)
{
  if (n != CSR_SHA256_HEX_LEN)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

/* ---------------------------------------------------------------- by-stat index */

static void
stat_key (const struct stat *st, char *buf, size_t size)
{
  snprintf (buf, size, "%ju-%ju-%jd-%jd.%09ld", (uintmax_t)st->st_dev, (uintmax_t)st->st_ino,
            (intmax_t)st->st_size, (intmax_t)st->st_mtim.tv_sec, (long)st->st_mtim.tv_nsec);
}

/* True when the index names an existing tree for KEY; HEX receives its
 * digest.  The index directory, the link and the tree must be ours and not
 * writable by group or others, and the link's target a bare digest (a name
 * in the cache, never a path out of it); anything else is a miss. */
static bool
index_lookup (struct cache *c, const char *key, char hex[CSR_SHA256_HEX_LEN + 1])
{
  char target[CSR_SHA256_HEX_LEN + 2];
  cleanup_close int ifd
      = openat (c->fd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (ifd < 0 || fstat (ifd, &st) < 0 || csr_trust_check_entry (&st, false, INDEX_DIR, NULL) < 0)
    return false;
  if (fstatat (ifd, key, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK (st.st_mode)
      || st.st_uid != geteuid ())
    return false;
  ssize_t n = readlinkat (ifd, key, target, sizeof target);
  if (n < 0 || !is_hex_digest (target, (size_t)n))
    return false;
  memcpy (hex, target, CSR_SHA256_HEX_LEN);
  hex[CSR_SHA256_HEX_LEN] = '\0';
  return tree_exists (c, hex);
}

/* Best effort: a cache we can't write to still works, only slower. */
static void
index_add (struct cache *c, const char *key, const char *hex)
{
  char tmp[256], path[256];
  if (mkdirat (c->fd, INDEX_DIR, 0755) == 0)
    {
      if (fchmodat (c->fd, INDEX_DIR, 0755, 0) < 0)
        csr_debug ("rootfs cache: chmod '%s/" INDEX_DIR "': %s", c->dir, strerror (errno));
    }
  else if (errno != EEXIST)
    {
      csr_debug ("rootfs cache: mkdir '%s/" INDEX_DIR "': %s", c->dir, strerror (errno));
      return;
    }
  snprintf (tmp, sizeof tmp, INDEX_DIR "/" TMP_PREFIX "%s-%ld", key, (long)getpid ());
  snprintf (path, sizeof path, INDEX_DIR "/%s", key);
  (void)unlinkat (c->fd, tmp, 0);
  if (symlinkat (hex, c->fd, tmp) < 0 || renameat (c->fd, tmp, c->fd, path) < 0)
    {
      csr_debug ("rootfs cache: index entry '%s/%s': %s", c->dir, path, strerror (errno));
      (void)unlinkat (c->fd, tmp, 0);
    }
}

/* ---------------------------------------------------------------- locked work */

int
csr_cache_lock_dir (int dfd, const char *dir, mode_t mode, csr_error **err)
{
  int fd = openat (dfd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0)
    return csr_error_errno (err, "lock '%s/" LOCK_NAME "'", dir);
  while (flock (fd, LOCK_EX) < 0)
    if (errno != EINTR)
      {
        csr_error_errno (err, "lock '%s/" LOCK_NAME "'", dir);
        close (fd);
        return -1;
      }
  return fd;
}

static int
cache_lock (struct cache *c, csr_error **err)
{
  return csr_cache_lock_dir (c->fd, c->dir, 0644, err);
}

int
csr_cache_remove_tmp (int dfd, const char *dir, const char *who, bool say_each)
{
  int fd = dup (dfd);
  cleanup_dir DIR *d = csr_fdopendir_or_close (fd);
  if (d == NULL)
    return -1;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strncmp (de->d_name, TMP_PREFIX, strlen (TMP_PREFIX)) != 0)
        continue;
      cleanup_free char *path = NULL;
      cleanup_error csr_error *e = NULL;
      if (asprintf (&path, "%s/%s", dir, de->d_name) < 0)
        return -1;
      if (say_each)
        csr_debug ("%s: removing stale '%s'", who, path);
      if (csr_rm_rf (path, &e) < 0)
        csr_debug ("%s: %s", who, csr_error_text (e));
    }
  return 0;
}

/* With the lock held, any temporary tree is the remains of a crashed unpack. */
static void
remove_stale (struct cache *c)
{
  if (csr_cache_remove_tmp (c->fd, c->dir, "rootfs cache", true) < 0)
    return;

  /* Index temporaries are made without the lock: only remove old ones. */
  int ifd = openat (c->fd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  cleanup_dir DIR *id = csr_fdopendir_or_close (ifd);
  if (id == NULL)
    return;
  time_t now = time (NULL);
  struct dirent *de;
  while ((de = readdir (id)) != NULL)
    {
      struct stat st;
      if (strncmp (de->d_name, TMP_PREFIX, strlen (TMP_PREFIX)) == 0
          && fstatat (ifd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
          && now - st.st_mtim.tv_sec > STALE_INDEX_TMP_SEC)
        (void)unlinkat (ifd, de->d_name, 0);
    }
}

static bool
same_file (const struct stat *a, const struct stat *b)
{
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size
         && a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* ERR names running out of space: say so the way the unpack does. */
static int
space_error (csr_error **err, const char *dir, const char *what, uint64_t need)
{
  if (*err == NULL || ((*err)->status != ENOSPC && (*err)->status != EDQUOT))
    return -1;
  csr_error_freep (err);
  return csr_rootfs_nospace (dir, what, need, err);
}

/* Unpack SOURCE (whose digest is HEX and whose stat was ST when hashed) into
 * a temporary directory of the cache, read-only and with a manifest; check
 * every entry against the manifest, flush it all to disk, write
 * CACHE/<HEX>.manifest and rename the tree into place (the tree's rename
 * publishes both).  Called with the lock held. */
static int
unpack_tree (struct cache *c, const char *source, const struct stat *st, const char *hex,
             csr_error **err)
{
  cleanup_free char *tmp = NULL;
  char mname[CSR_SHA256_HEX_LEN + sizeof MANIFEST_SUFFIX];
  snprintf (mname, sizeof mname, "%s" MANIFEST_SUFFIX, hex);
  if (set_path (&tmp, err, "%s/" TMP_PREFIX "%.16s-XXXXXX", c->dir, hex) < 0)
    return -1;
  if (mkdtemp (tmp) == NULL)
    return csr_error_errno (err, "create a directory in '%s'", c->dir);
  /* Readable by other uids: as root the jail runs as an unmapped user. */
  int ret = -1;
  bool manifest_written = false;
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  struct csr_tree_damage d;
  memset (&d, 0, sizeof d);
  /* Opened before the unpack: syncfs() then reports the write-back errors
   * of everything written since (the file's error sequence starts here). */
  cleanup_close int tfd = open (tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (tfd < 0)
    {
      csr_error_errno (err, "open '%s'", tmp);
      goto out;
    }
  if (fchmod (tfd, 0755) < 0)
    {
      csr_error_errno (err, "chmod '%s'", tmp);
      goto out;
    }
  m.source = realpath (source, NULL);
  snprintf (m.sha256, sizeof m.sha256, "%s", hex);
  struct csr_unpack_opts o = { .read_only = true, .manifest = &m };
  if (csr_rootfs_unpack_ex (source, tmp, &o, err) < 0)
    goto out;

  struct stat now;
  if (stat (source, &now) < 0)
    {
      csr_error_errno (err, "stat");
      goto out;
    }
  if (!same_file (st, &now))
    {
      csr_error_set (err, 0, "the file changed while it was unpacked");
      goto out;
    }
  /* Every entry is there, with its type, mode and size. */
  if (csr_manifest_check (tfd, &m, false, &d, err) < 0)
    goto out;
  if (d.n > 0)
    {
      csr_error_set (err, 0,
                     "the unpacked tree differs from the archive in %zu entries (first: %s)", d.n,
                     d.n_shown ? d.shown[0] : "?");
      goto out;
    }
  if (syncfs (tfd) < 0)
    {
      csr_error_errno (err, "sync '%s'", tmp);
      space_error (err, c->dir, "the tree", m.bytes);
      goto out;
    }
  if (csr_manifest_write (c->fd, mname, &m, err) < 0)
    {
      space_error (err, c->dir, "the manifest", m.bytes);
      goto out;
    }
  manifest_written = true;
  if (renameat (c->fd, strrchr (tmp, '/') + 1, c->fd, hex) < 0)
    {
      csr_error_errno (err, "rename '%s' to '%s'", tmp, hex);
      goto out;
    }
  if (fsync (c->fd) < 0)
    csr_debug ("rootfs cache: fsync '%s': %s", c->dir, strerror (errno));
  ret = 0;
out:
  if (ret < 0)
    {
      cleanup_error csr_error *e = NULL;
      if (csr_rm_rf (tmp, &e) < 0)
        csr_debug ("rootfs cache: %s", csr_error_text (e));
      if (manifest_written && unlinkat (c->fd, mname, 0) < 0)
        csr_debug ("rootfs cache: remove '%s/%s': %s", c->dir, mname, strerror (errno));
    }
  csr_tree_damage_release (&d);
  csr_manifest_release (&m);
  return ret;
}

/* Make sure CACHE/<HEX> exists; *UNPACKED tells whether this call made it. */
static int
ensure_tree (struct cache *c, const char *source, const struct stat *st, const char *hex,
             bool *unpacked, csr_error **err)
{
  *unpacked = false;
  /* Trees appear only by rename(): one that exists is complete. */
  if (tree_exists (c, hex))
    return 0;
  cleanup_close int lock = cache_lock (c, err);
  if (lock < 0)
    return -1;
  if (tree_exists (c, hex))
    return 0; /* another csrun unpacked it while we waited */
  remove_stale (c);
  if (unpack_tree (c, source, st, hex, err) < 0)
    return -1;
  *unpacked = true;
  return 0;
}

static int
resolve_tarball (struct csr_rootfs *r, int fd, const struct stat *st, const char *cache_dir,
                 csr_error **err)
{
  struct cache c = { .dir = NULL, .fd = -1 };
  char key[160];
  char hex[CSR_SHA256_HEX_LEN + 1];
  int ret = -1;

  if (cache_open (&c, cache_dir, err) < 0)
    goto out;
  stat_key (st, key, sizeof key);
  /* The use lock comes before the tree is trusted to be there: `csrun cache
   * prune` may have removed it since the index named it. */
  char locked[CSR_SHA256_HEX_LEN + 1] = "";
  bool found = index_lookup (&c, key, hex);
  if (found)
    {
      r->use_fd = csr_rootfs_use_lock (c.fd, c.dir, hex);
      memcpy (locked, hex, sizeof locked);
      found = tree_exists (&c, hex);
    }
  if (found)
    r->unpacked_now = false;
  else
    {
      if (csr_sha256_fd (fd, hex, err) < 0)
        goto out;
      /* Locked once the tree is there (a failed unpack leaves no lock file);
       * a prune between the two is seen by the check after the lock. */
      for (int k = 0;; k++)
        {
          if (ensure_tree (&c, r->source, st, hex, &r->unpacked_now, err) < 0)
            goto out;
          if (strcmp (locked, hex) != 0)
            {
              if (r->use_fd >= 0)
                close (r->use_fd);
              r->use_fd = csr_rootfs_use_lock (c.fd, c.dir, hex);
              memcpy (locked, hex, sizeof locked);
            }
          if (tree_exists (&c, hex) || k == 2)
            break;
        }
      index_add (&c, key, hex);
    }
  r->sha256 = strdup (hex);
  if (r->sha256 == NULL || set_path (&r->dir, err, "%s/%s", c.dir, hex) < 0)
    {
      csr_error_errno (err, "cannot allocate");
      goto out;
    }
  ret = 0;
out:
  cache_close (&c);
  return ret;
}

int
csr_rootfs_resolve (const char *source, const char *cache_dir, struct csr_rootfs **out,
                    csr_error **err)
{
  *out = NULL;
  if (source == NULL || *source == '\0')
    return csr_error_set (err, EINVAL, "rootfs: empty path");
  /* O_NONBLOCK: a FIFO must not hang us before we can refuse it. */
  cleanup_close int fd = open (source, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return csr_error_errno (err, "rootfs '%s'", source);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "rootfs '%s'", source);

  cleanup_rootfs struct csr_rootfs *r = calloc (1, sizeof *r);
  if (r != NULL)
    r->use_fd = -1;
  if (r == NULL || (r->source = strdup (source)) == NULL)
    return csr_error_errno (err, "rootfs '%s'", source);
  if (S_ISDIR (st.st_mode))
    {
      r->dir = realpath (source, NULL);
      if (r->dir == NULL)
        return csr_error_errno (err, "rootfs '%s'", source);
      *out = steal_pointer (&r);
      return 0;
    }
  if (!S_ISREG (st.st_mode))
    return csr_error_set (err, 0, "rootfs '%s': not a tarball or a directory", source);

  cleanup_free char *default_dir = NULL;
  if (cache_dir == NULL)
    {
      if (csr_rootfs_cache_dir (&default_dir, err) < 0)
        return csr_error_wrap (err, "rootfs '%s'", source);
      cache_dir = default_dir;
    }
  if (resolve_tarball (r, fd, &st, cache_dir, err) < 0)
    return csr_error_wrap (err, "rootfs '%s'", source);
  *out = steal_pointer (&r);
  return 0;
}

/* ---------------------------------------------------------------- maintenance */

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

int
csr_rootfs_cache_trees (const char *cache_dir, char ***hexes, size_t *n, csr_error **err)
{
  *hexes = NULL;
  *n = 0;
  cleanup_free char *default_dir = NULL;
  if (cache_dir == NULL)
    {
      if (csr_rootfs_cache_dir (&default_dir, err) < 0)
        return -1;
      cache_dir = default_dir;
    }
  int fd = open (cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return csr_error_errno (err, "cache directory '%s'", cache_dir);
    }
  cleanup_dir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return csr_error_errno (err, "cache directory '%s'", cache_dir);
    }
  char **out = NULL;
  size_t cnt = 0, cap = 0;
  struct dirent *de;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (!is_hex_digest (de->d_name, strlen (de->d_name))
          || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode))
        continue;
      if (cnt == cap)
        {
          cap = cap ? cap * 2 : 8;
          char **no = realloc (out, cap * sizeof *no);
          if (no == NULL)
            goto nomem;
          out = no;
        }
      if ((out[cnt] = strdup (de->d_name)) == NULL)
        goto nomem;
      cnt++;
      errno = 0;
    }
  qsort (out, cnt, sizeof *out, cmp_str);
  *hexes = out;
  *n = cnt;
  return 0;
nomem:
  for (size_t i = 0; i < cnt; i++)
    free (out[i]);
  free (out);
  return csr_error_errno (err, "cache directory '%s'", cache_dir);
}

/* SOURCE is a regular file whose digest is HEX: *ST gets its stat. */
static bool
source_matches (const char *source, const char *hex, struct stat *st)
{
  cleanup_close int fd = open (source, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  char got[CSR_SHA256_HEX_LEN + 1];
  csr_error *e = NULL;
  if (fd < 0 || fstat (fd, st) < 0 || !S_ISREG (st->st_mode))
    return false;
  if (csr_sha256_fd (fd, got, &e) < 0)
    {
      csr_error_free (e);
      return false;
    }
  return strcmp (got, hex) == 0;
}

/* Take the tree HEX and its manifest out of the cache (lock held). */
static int
remove_tree (struct cache *c, const char *hex, csr_error **err)
{
  char mname[CSR_SHA256_HEX_LEN + sizeof MANIFEST_SUFFIX];
  snprintf (mname, sizeof mname, "%s" MANIFEST_SUFFIX, hex);
  cleanup_free char *aside = NULL;
  if (set_path (&aside, err, TMP_PREFIX "damaged-%.16s-%ld", hex, (long)getpid ()) < 0)
    return -1;
  /* Renamed first: no reader finds a half-removed tree under its name. */
  if (renameat (c->fd, hex, c->fd, aside) < 0 && errno != ENOENT)
    return csr_error_errno (err, "rename '%s/%s'", c->dir, hex);
  if (unlinkat (c->fd, mname, 0) < 0 && errno != ENOENT)
    return csr_error_errno (err, "remove '%s/%s'", c->dir, mname);
  if (fsync (c->fd) < 0)
    csr_debug ("rootfs cache: fsync '%s': %s", c->dir, strerror (errno));
  cleanup_free char *path = NULL;
  if (set_path (&path, err, "%s/%s", c->dir, aside) < 0)
    return -1;
  cleanup_error csr_error *e = NULL;
  if (csr_rm_rf (path, &e) < 0)
    csr_debug ("rootfs cache: %s (removed by the next unpack)", csr_error_text (e));
  return 0;
}

int
csr_rootfs_cache_repair (const char *cache_dir, const char *hex, const char *source,
                         bool remove_if_no_source, ino_t expect_ino,
                         enum csr_repair_outcome *outcome, char **used, csr_error **err)
{
  *used = NULL;
  *outcome = CSR_REPAIR_ALREADY;
  if (hex == NULL || !is_hex_digest (hex, strlen (hex)))
    return csr_error_set (err, EINVAL, "repair: '%s' is not a tree's digest", hex ? hex : "");
  struct cache c = { .dir = NULL, .fd = -1 };
  int ret = -1;
  cleanup_close int lock = -1;
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  char mname[CSR_SHA256_HEX_LEN + sizeof MANIFEST_SUFFIX];
  snprintf (mname, sizeof mname, "%s" MANIFEST_SUFFIX, hex);
  if (cache_open (&c, cache_dir, err) < 0)
    goto out;
  if ((lock = cache_lock (&c, err)) < 0)
    goto out;
  struct stat st;
  if (expect_ino != 0 && fstatat (c.fd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0
      && st.st_ino != expect_ino)
    {
      ret = 0; /* replaced by another csrun while we waited for the lock */
      goto out;
    }
  if (source == NULL)
    {
      cleanup_error csr_error *e = NULL;
      if (csr_manifest_read (c.fd, mname, &m, &e) == 0)
        source = m.source;
    }
  struct stat sst;
  if (source == NULL || !source_matches (source, hex, &sst))
    {
      if (!remove_if_no_source)
        {
          csr_error_set (err, 0, "no tarball with digest %.16s... to unpack it from%s%s", hex,
                         source ? ": not " : "", source ? source : "");
          goto out;
        }
      if (remove_tree (&c, hex, err) < 0)
        goto out;
      *outcome = CSR_REPAIR_REMOVED;
      if (source && (*used = strdup (source)) == NULL)
        {
          csr_error_errno (err, "cannot allocate");
          goto out;
        }
      ret = 0;
      goto out;
    }
  if ((*used = strdup (source)) == NULL)
    {
      csr_error_errno (err, "cannot allocate");
      goto out;
    }
  /* The damaged tree goes first: it may hold the space the new one needs. */
  if (remove_tree (&c, hex, err) < 0)
    goto out;
  remove_stale (&c);
  if (unpack_tree (&c, *used, &sst, hex, err) < 0)
    goto out;
  *outcome = CSR_REPAIR_UNPACKED;
  ret = 0;
out:
  if (ret < 0)
    {
      free (*used);
      *used = NULL;
    }
  csr_manifest_release (&m);
  cache_close (&c);
  return ret;
}
