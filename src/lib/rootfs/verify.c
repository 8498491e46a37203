/* csrun — verify an unpacked rootfs tree against its manifest, and repair it
 * (unpack it again) when it was damaged. */
#include "config.h"
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/log.h"

void
csr_tree_damage_release (struct csr_tree_damage *d)
{
  for (size_t i = 0; i < d->n_shown; i++)
    free (d->shown[i]);
  memset (d, 0, sizeof *d);
}

static void damage (struct csr_tree_damage *d, const char *path, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

/* Count one damaged entry; keep "PATH: what" for the first few. */
static void
damage (struct csr_tree_damage *d, const char *path, const char *fmt, ...)
{
  d->n++;
  if (d->n_shown >= CSR_DAMAGE_SHOWN)
    return;
  char what[512];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (what, sizeof what, fmt, ap);
  va_end (ap);
  char *s = NULL;
  if (asprintf (&s, "%s: %s", path, what) >= 0)
    d->shown[d->n_shown++] = s;
}

static const char *
type_name (mode_t mode)
{
  if (S_ISREG (mode))
    return "file";
  if (S_ISDIR (mode))
    return "directory";
  if (S_ISLNK (mode))
    return "symlink";
  return "special file";
}

static const char *
entry_type_name (char type)
{
  return type == 'f' ? "file" : type == 'd' ? "directory" : "symlink";
}

static bool
type_matches (char type, mode_t mode)
{
  return (type == 'f' && S_ISREG (mode)) || (type == 'd' && S_ISDIR (mode))
         || (type == 'l' && S_ISLNK (mode));
}

/* Compare one entry; false when it differs (and was counted). */
static bool
check_meta (int tree_fd, const struct csr_manifest_entry *e, struct csr_tree_damage *d)
{
  struct stat st;
  bool top = strcmp (e->path, ".") == 0;
  if ((top ? fstat (tree_fd, &st) : fstatat (tree_fd, e->path, &st, AT_SYMLINK_NOFOLLOW)) < 0)
    {
      if (errno == ENOENT || errno == ENOTDIR)
        damage (d, e->path, "missing");
      else
        damage (d, e->path, "cannot be examined: %s", strerror (errno));
      return false;
    }
  if (!type_matches (e->type, st.st_mode))
    {
      damage (d, e->path, "is a %s, not a %s", type_name (st.st_mode), entry_type_name (e->type));
      return false;
    }
  if (e->type != 'l' && (st.st_mode & 07777) != e->mode)
    {
      damage (d, e->path, "mode 0%o, not 0%o", (unsigned)(st.st_mode & 07777), (unsigned)e->mode);
      return false;
    }
  if (e->type == 'f' && (uint64_t)st.st_size != e->size)
    {
      damage (d, e->path, "%jd bytes, not %" PRIu64, (intmax_t)st.st_size, e->size);
      return false;
    }
  if (e->type == 'l')
    {
      char target[4096];
      ssize_t n = readlinkat (tree_fd, e->path, target, sizeof target - 1);
      if (n < 0)
        {
          damage (d, e->path, "cannot be read: %s", strerror (errno));
          return false;
        }
      target[n] = '\0';
      if (strcmp (target, e->data) != 0)
        {
          damage (d, e->path, "points to '%s', not '%s'", target, e->data);
          return false;
        }
    }
  return true;
}

static void
check_contents (int tree_fd, const struct csr_manifest_entry *e, struct csr_tree_damage *d)
{
  /* O_NONBLOCK: whatever took the file's place must not block the check. */
  cleanup_close int fd
      = openat (tree_fd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    {
      damage (d, e->path, "cannot be read: %s", strerror (errno));
      return;
    }
  char hex[CSR_SHA256_HEX_LEN + 1];
  csr_error *e2 = NULL;
  if (csr_sha256_fd (fd, hex, &e2) < 0)
    {
      damage (d, e->path, "cannot be read: %s", csr_error_text (e2));
      csr_error_free (e2);
      return;
    }
  if (strcmp (hex, e->data) != 0)
    damage (d, e->path, "contents differ (sha256 %.12s..., not %.12s...)", hex, e->data);
}

static int
cmp_path (const void *a, const void *b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Entries of directory E that the manifest does not list (PATHS: its paths,
 * sorted): a file dropped into the tree is damage too. */
static int
check_extras (int tree_fd, const struct csr_manifest_entry *e, const char **paths, size_t n,
              struct csr_tree_damage *d, csr_error **err)
{
  bool top = strcmp (e->path, ".") == 0;
  int fd = openat (tree_fd, e->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return 0; /* counted by check_meta */
  cleanup_dir DIR *dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return csr_error_errno (err, "verify: read '%s'", e->path);
    }
  struct dirent *de;
  while ((de = readdir (dir)) != NULL)
    {
      const char *name = de->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
        continue;
      cleanup_free char *full = NULL;
      if (asprintf (&full, "%s%s%s", top ? "" : e->path, top ? "" : "/", name) < 0)
        return csr_error_errno (err, "verify: cannot allocate");
      const char *key = full;
      if (bsearch (&key, paths, n, sizeof *paths, cmp_path) == NULL)
        damage (d, full, "not in the manifest");
    }
  return 0;
}

int
csr_manifest_check (int tree_fd, const struct csr_manifest *m, bool full, struct csr_tree_damage *d,
                    csr_error **err)
{
  cleanup_free const char **paths = calloc (m->n ? m->n : 1, sizeof *paths);
  if (paths == NULL)
    return csr_error_errno (err, "verify: cannot allocate");
  for (size_t i = 0; i < m->n; i++)
    paths[i] = m->entries[i].path;
  qsort (paths, m->n, sizeof *paths, cmp_path);
  for (size_t i = 0; i < m->n; i++)
    {
      const struct csr_manifest_entry *e = &m->entries[i];
      if (check_meta (tree_fd, e, d) && full && e->type == 'f')
        check_contents (tree_fd, e, d);
      if (e->type == 'd' && check_extras (tree_fd, e, paths, m->n, d, err) < 0)
        return -1;
    }
  return 0;
}

/* ---------------------------------------------------------------- cached trees */

int
csr_rootfs_cache_verify (const char *cache_dir, const char *hex, bool full,
                         struct csr_tree_damage *d, csr_error **err)
{
  memset (d, 0, sizeof *d);
  cleanup_close int cfd = open (cache_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cfd < 0)
    return csr_error_errno (err, "cache directory '%s'", cache_dir);
  cleanup_close int tfd = openat (cfd, hex, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (tfd < 0)
    {
      damage (d, hex, "the tree cannot be opened: %s", strerror (errno));
      return 0;
    }
  char name[CSR_SHA256_HEX_LEN + 16];
  snprintf (name, sizeof name, "%s.manifest", hex);
  struct csr_manifest m;
  csr_error *e = NULL;
  if (csr_manifest_read (cfd, name, &m, &e) < 0)
    {
      d->no_manifest = true;
      if (e->status == ENOENT)
        damage (d, name, "missing (the tree was unpacked by an older csrun)");
      else
        damage (d, name, "%s", csr_error_text (e));
      csr_error_free (e);
      return 0;
    }
  int rc = 0;
  if (strcmp (m.sha256, hex) != 0)
    {
      d->no_manifest = true;
      damage (d, name, "describes another tarball (%.16s...)", m.sha256[0] ? m.sha256 : "none");
    }
  else
    rc = csr_manifest_check (tfd, &m, full, d, err);
  csr_manifest_release (&m);
  return rc;
}

int
csr_rootfs_check_repair (const struct csr_rootfs *r, struct csr_tree_damage *d, bool *repaired,
                         csr_error **err)
{
  memset (d, 0, sizeof *d);
  *repaired = false;
  if (r == NULL || r->sha256 == NULL || r->dir == NULL)
    return 0;
  const char *slash = strrchr (r->dir, '/');
  if (slash == NULL)
    return 0;
  cleanup_free char *cache_dir = strndup (r->dir, slash == r->dir ? 1 : (size_t)(slash - r->dir));
  if (cache_dir == NULL)
    return csr_error_errno (err, "verify the rootfs");
  struct stat st;
  ino_t ino = stat (r->dir, &st) == 0 ? st.st_ino : 0;
  /* Metadata first (cheap); the contents only when that found nothing. */
  if (csr_rootfs_cache_verify (cache_dir, r->sha256, false, d, err) < 0)
    return -1;
  if (d->n == 0 && csr_rootfs_cache_verify (cache_dir, r->sha256, true, d, err) < 0)
    return -1;
  if (d->n == 0)
    return 0;
  csr_debug ("rootfs tree %s: %zu damaged entries (first: %s)", r->dir, d->n,
             d->n_shown ? d->shown[0] : "?");
  enum csr_repair_outcome outcome;
  cleanup_free char *used = NULL;
  if (csr_rootfs_cache_repair (cache_dir, r->sha256, r->source, false, ino, &outcome, &used, err)
      < 0)
    return csr_error_wrap (err, "repair the damaged rootfs tree '%s'", r->dir);
  *repaired = true;
  return 0;
}
