/* csrun — what the cache directory holds, for `csrun cache ls` and `csrun
 * cache prune`: the unpacked rootfs trees (CACHE_DIR/<sha256>, with their
 * .manifest, .use lock and by-stat links), the compiled gates
 * (CACHE_DIR/gate/<key>.bin) and the seccomp programs
 * (CACHE_DIR/seccomp/<key>.bpf); and the trees' use lock.  The package
 * layers (CACHE_DIR/layers/<key>) are cache-layers.c's. */
#include "config.h"
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
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

/* ---------------------------------------------------------------- the use lock */

int
csr_rootfs_use_lock (int cache_fd, const char *dir, const char *hex)
{
  char name[CSR_SHA256_HEX_LEN + sizeof USE_SUFFIX];
  snprintf (name, sizeof name, "%s" USE_SUFFIX, hex);
  /* A prune that won the race unlinks the file it locked: lock the file
   * that has the name, not one that had it. */
  for (int tries = 0; tries < 8; tries++)
    {
      int fd
          = openat (cache_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
      if (fd < 0)
        {
          csr_debug ("rootfs cache: use lock '%s/%s': %s", dir, name, strerror (errno));
          return -1;
        }
      struct stat st, now;
      if (fstat (fd, &st) < 0 || csr_trust_check_entry (&st, true, name, NULL) < 0)
        {
          csr_debug ("rootfs cache: use lock '%s/%s': not a file of ours", dir, name);
          close (fd);
          return -1;
        }
      while (flock (fd, LOCK_SH) < 0)
        if (errno != EINTR)
          {
            csr_debug ("rootfs cache: flock '%s/%s': %s", dir, name, strerror (errno));
            close (fd);
            return -1;
          }
      if (fstatat (cache_fd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st.st_dev
          && now.st_ino == st.st_ino)
        {
          /* The last use, to within USE_STAMP_SEC: one write an hour, not
           * one a run. */
          if (time (NULL) - st.st_mtim.tv_sec >= USE_STAMP_SEC && futimens (fd, NULL) < 0)
            csr_debug ("rootfs cache: touch '%s/%s': %s", dir, name, strerror (errno));
          return fd;
        }
      close (fd);
    }
  csr_debug ("rootfs cache: use lock '%s/%s': replaced again and again", dir, name);
  return -1;
}

/* ---------------------------------------------------------------- listing */

bool
csr_cache_is_hex (const char *s)
{
  if (strlen (s) != CSR_SHA256_HEX_LEN)
    return false;
  for (const char *p = s; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

/* nftw has no user pointer: one walk at a time (csrun is one thread here). */
static uint64_t walk_bytes;

static int
add_bytes (const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)path;
  (void)flag;
  (void)ftw;
  walk_bytes += (uint64_t)st->st_blocks * 512;
  return 0;
}

uint64_t
csr_cache_tree_bytes (const char *path)
{
  walk_bytes = 0;
  if (nftw (path, add_bytes, 32, FTW_PHYS | FTW_MOUNT) != 0)
    csr_debug ("cache: walking '%s': %s", path, strerror (errno));
  return walk_bytes;
}

bool
csr_cache_in_use (int cfd, const char *hex)
{
  char name[CSR_SHA256_HEX_LEN + sizeof USE_SUFFIX];
  snprintf (name, sizeof name, "%s" USE_SUFFIX, hex);
  cleanup_close int fd = openat (cfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return false;
  if (flock (fd, LOCK_EX | LOCK_NB) < 0)
    return errno == EWOULDBLOCK;
  flock (fd, LOCK_UN);
  return false;
}

int
csr_cache_take_use_lock (int dfd, const char *use, struct csr_cache_entry *e)
{
  int ufd = openat (dfd, use, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  struct stat st;
  if (ufd < 0 || fstat (ufd, &st) < 0 || csr_trust_check_entry (&st, true, use, NULL) < 0)
    {
      e->skipped = "its use lock can't be taken";
      if (ufd >= 0)
        close (ufd);
      return -1;
    }
  if (flock (ufd, LOCK_EX | LOCK_NB) < 0)
    {
      e->skipped
          = errno == EWOULDBLOCK ? "in use by a running csrun" : "its use lock can't be taken";
      close (ufd);
      return -1;
    }
  return ufd;
}

struct csr_cache_entry *
csr_cache_list_add (struct csr_cache_list *l)
{
  if (l->n == l->cap)
    {
      size_t cap = l->cap ? l->cap * 2 : 16;
      struct csr_cache_entry *nv = realloc (l->v, cap * sizeof *nv);
      if (nv == NULL)
        return NULL;
      l->v = nv;
      l->cap = cap;
    }
  struct csr_cache_entry *e = &l->v[l->n++];
  memset (e, 0, sizeof *e);
  return e;
}

static int64_t
mtime_at (int dfd, const char *name)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0;
  return (int64_t)st.st_mtim.tv_sec;
}

static int
list_trees (int cfd, const char *dir, struct csr_cache_list *l, csr_error **err)
{
  int fd = dup (cfd);
  if (fd < 0)
    return csr_error_errno (err, "cache directory '%s'", dir);
  cleanup_dir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return csr_error_errno (err, "cache directory '%s'", dir);
    }
  rewinddir (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (!csr_cache_is_hex (de->d_name) || fstatat (cfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || csr_trust_check_entry (&st, false, de->d_name, NULL) < 0)
        continue; /* not a tree csrun made */
      struct csr_cache_entry *e = csr_cache_list_add (l);
      if (e == NULL || (e->name = strdup (de->d_name)) == NULL
          || asprintf (&e->path, "%s/%s", dir, de->d_name) < 0)
        {
          if (e)
            e->path = NULL;
          return csr_error_errno (err, "cannot allocate");
        }
      e->kind = CSR_CACHE_ROOTFS;
      char side[CSR_SHA256_HEX_LEN + 16];
      snprintf (side, sizeof side, "%s" MANIFEST_SUFFIX, de->d_name);
      struct stat mst;
      e->bytes = csr_cache_tree_bytes (e->path);
      if (fstatat (cfd, side, &mst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (mst.st_mode))
        e->bytes += (uint64_t)mst.st_blocks * 512;
      /* Published by rename: the tree's own mtime is when it was unpacked. */
      e->last_use = (int64_t)st.st_mtim.tv_sec;
      snprintf (side, sizeof side, "%s" USE_SUFFIX, de->d_name);
      int64_t used = mtime_at (cfd, side);
      if (used > e->last_use)
        e->last_use = used;
      e->in_use = csr_cache_in_use (cfd, de->d_name);
    }
  return 0;
}

/* The regular files of ours in CACHE_DIR/SUB whose names end in SUFFIX. */
static int
list_files (int cfd, const char *dir, const char *sub, const char *suffix, enum csr_cache_kind kind,
            struct csr_cache_list *l, csr_error **err)
{
  cleanup_error csr_error *e0 = NULL;
  int sfd = csr_trust_open_subdir (cfd, dir, sub, 0, &e0);
  if (sfd < 0)
    {
      if (e0 && e0->status == ENOENT)
        return 0;
      csr_error_set (err, 0, "%s", csr_error_text (e0));
      return -1;
    }
  cleanup_dir DIR *d = fdopendir (sfd);
  if (d == NULL)
    {
      close (sfd);
      return csr_error_errno (err, "'%s/%s'", dir, sub);
    }
  size_t sl = strlen (suffix);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      size_t nl = strlen (de->d_name);
      struct stat st;
      if (nl <= sl || de->d_name[0] == '.' || strcmp (de->d_name + nl - sl, suffix) != 0
          || fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || csr_trust_check_entry (&st, true, de->d_name, NULL) < 0)
        continue;
      struct csr_cache_entry *e = csr_cache_list_add (l);
      if (e == NULL || asprintf (&e->name, "%s/%s", sub, de->d_name) < 0)
        {
          if (e)
            e->name = NULL;
          return csr_error_errno (err, "cannot allocate");
        }
      if (asprintf (&e->path, "%s/%s/%s", dir, sub, de->d_name) < 0)
        {
          e->path = NULL;
          return csr_error_errno (err, "cannot allocate");
        }
      e->kind = kind;
      e->bytes = (uint64_t)st.st_blocks * 512;
      e->last_use = (int64_t)st.st_mtim.tv_sec;
    }
  return 0;
}

static int
cmp_entry (const void *a, const void *b)
{
  const struct csr_cache_entry *x = a, *y = b;
  if (x->kind != y->kind)
    return (int)x->kind - (int)y->kind;
  return strcmp (x->name, y->name);
}

/* Open the cache directory for listing: trust-checked, never created.
 * Returns the fd, -1 with *ERR, or -2 (and no error) when it does not exist. */
static int
open_cache (const char *cache_dir, char **canonical, csr_error **err)
{
  int fd = csr_trust_open_dir ("cache directory", cache_dir, 0, canonical, err);
  if (fd < 0 && fd != CSR_TRUST_REFUSED && *err && (*err)->status == ENOENT)
    {
      csr_error_freep (err);
      return -2;
    }
  return fd < 0 ? -1 : fd;
}

static int
list_all (int cfd, const char *dir, struct csr_cache_list *l, csr_error **err)
{
  if (list_trees (cfd, dir, l, err) < 0 || csr_cache_list_layers (cfd, dir, l, err) < 0
      || list_files (cfd, dir, "gate", ".bin", CSR_CACHE_GATE, l, err) < 0
      || list_files (cfd, dir, "seccomp", ".bpf", CSR_CACHE_SECCOMP, l, err) < 0)
    return -1;
  if (l->n > 1)
    qsort (l->v, l->n, sizeof *l->v, cmp_entry);
  return 0;
}

void
csr_cache_entries_release (struct csr_cache_entry *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    {
      free (v[i].name);
      free (v[i].path);
      for (char **p = v[i].asked; p && *p; p++)
        free (*p);
      free (v[i].asked);
      for (size_t k = 0; k < v[i].n_pkgs; k++)
        {
          free (v[i].pkgs[k].name);
          free (v[i].pkgs[k].version);
        }
      free (v[i].pkgs);
      free (v[i].base_sha256);
    }
  free (v);
}

int
csr_cache_list (const char *cache_dir, struct csr_cache_entry **out, size_t *n, csr_error **err)
{
  *out = NULL;
  *n = 0;
  cleanup_free char *dir = NULL;
  cleanup_close int cfd = open_cache (cache_dir, &dir, err);
  if (cfd == -2)
    return 0;
  if (cfd < 0)
    return -1;
  struct csr_cache_list l = { 0 };
  if (list_all (cfd, dir, &l, err) < 0)
    {
      csr_cache_entries_release (l.v, l.n);
      return -1;
    }
  *out = l.v;
  *n = l.n;
  return 0;
}

/* ---------------------------------------------------------------- pruning */

/* Remove the by-stat links that name tree HEX. */
static void
unlink_index (int cfd, const char *hex)
{
  int ifd = openat (cfd, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  cleanup_dir DIR *d = csr_fdopendir_or_close (ifd);
  if (d == NULL)
    return;
  struct dirent *de;
  char target[CSR_SHA256_HEX_LEN + 2];
  while ((de = readdir (d)) != NULL)
    {
      ssize_t k = readlinkat (ifd, de->d_name, target, sizeof target);
      if (k == CSR_SHA256_HEX_LEN && memcmp (target, hex, CSR_SHA256_HEX_LEN) == 0)
        (void)unlinkat (ifd, de->d_name, 0);
    }
}

/* Remove tree E (the cache lock held): only when no run holds its use
 * lock.  Returns 0 (removed, or *SKIPPED says why not) or -1. */
static int
prune_tree (int cfd, const char *dir, struct csr_cache_entry *e, csr_error **err)
{
  char use[CSR_SHA256_HEX_LEN + sizeof USE_SUFFIX];
  char manifest[CSR_SHA256_HEX_LEN + sizeof MANIFEST_SUFFIX];
  snprintf (use, sizeof use, "%s" USE_SUFFIX, e->name);
  snprintf (manifest, sizeof manifest, "%s" MANIFEST_SUFFIX, e->name);
  cleanup_close int ufd = csr_cache_take_use_lock (cfd, use, e);
  if (ufd < 0)
    return 0;
  cleanup_free char *aside = NULL, *aside_path = NULL;
  if (asprintf (&aside, TMP_PREFIX "prune-%.16s-%ld", e->name, (long)getpid ()) < 0
      || asprintf (&aside_path, "%s/%s", dir, aside) < 0)
    return csr_error_errno (err, "cannot allocate");
  /* Renamed first: no run finds a half-removed tree under its name. */
  if (renameat (cfd, e->name, cfd, aside) < 0)
    return csr_error_errno (err, "rename '%s'", e->path);
  unlink_index (cfd, e->name);
  if (unlinkat (cfd, manifest, 0) < 0 && errno != ENOENT)
    return csr_error_errno (err, "remove '%s/%s'", dir, manifest);
  /* Still locked: a run waiting for it finds the name gone and takes anew. */
  if (unlinkat (cfd, use, 0) < 0 && errno != ENOENT)
    return csr_error_errno (err, "remove '%s/%s'", dir, use);
  if (fsync (cfd) < 0)
    csr_debug ("cache: fsync '%s': %s", dir, strerror (errno));
  if (csr_rm_rf (aside_path, err) < 0)
    return -1;
  e->removed = true;
  return 0;
}

static int
prune_file (int cfd, const char *dir, struct csr_cache_entry *e, csr_error **err)
{
  const char *slash = strchr (e->name, '/');
  cleanup_free char *sub = strndup (e->name, (size_t)(slash - e->name));
  if (sub == NULL)
    return csr_error_errno (err, "cannot allocate");
  cleanup_error csr_error *e0 = NULL;
  cleanup_close int sfd = csr_trust_open_subdir (cfd, dir, sub, 0, &e0);
  if (sfd < 0)
    return csr_error_set (err, 0, "%s", csr_error_text (e0));
  /* What was loaded from it lives on in memory (a sealed memfd, a BPF
   * program): removing it only costs the next run a compile. */
  if (unlinkat (sfd, slash + 1, 0) < 0 && errno != ENOENT)
    return csr_error_errno (err, "remove '%s'", e->path);
  e->removed = true;
  return 0;
}

/* Use locks whose tree is gone (a run whose tree was then removed by
 * `cache verify --repair`; in layers/, a failed build): removed when
 * nobody holds them. */
void
csr_cache_prune_orphan_locks (int cfd)
{
  int fd = dup (cfd);
  cleanup_dir DIR *d = csr_fdopendir_or_close (fd);
  if (d == NULL)
    return;
  rewinddir (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      size_t n = strlen (de->d_name);
      char hex[CSR_SHA256_HEX_LEN + 1];
      struct stat st;
      if (n != CSR_SHA256_HEX_LEN + strlen (USE_SUFFIX)
          || strcmp (de->d_name + CSR_SHA256_HEX_LEN, USE_SUFFIX) != 0)
        continue;
      memcpy (hex, de->d_name, CSR_SHA256_HEX_LEN);
      hex[CSR_SHA256_HEX_LEN] = '\0';
      if (!csr_cache_is_hex (hex) || fstatat (cfd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0)
        continue;
      cleanup_close int ufd
          = openat (cfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
      if (ufd >= 0 && fstat (ufd, &st) == 0 && csr_trust_check_entry (&st, true, hex, NULL) == 0
          && flock (ufd, LOCK_EX | LOCK_NB) == 0)
        (void)unlinkat (cfd, de->d_name, 0);
    }
}

int
csr_cache_prune (const char *cache_dir, int64_t older_than_s, struct csr_cache_entry **out,
                 size_t *n, csr_error **err)
{
  *out = NULL;
  *n = 0;
  cleanup_free char *dir = NULL;
  cleanup_close int cfd = open_cache (cache_dir, &dir, err);
  if (cfd == -2)
    return 0;
  if (cfd < 0)
    return -1;
  /* The lock every unpack and repair takes: nothing is published or
   * repaired while we look. */
  cleanup_close int lock = csr_cache_lock_dir (cfd, dir, 0644, err);
  if (lock < 0)
    return -1;
  /* And the one layer builds take: no layer is built or published while
   * we look (lock order: the cache's, then the layers'). */
  cleanup_close int lfd = -1, llock = -1;
  if (csr_cache_layers_open (cfd, dir, &lfd, &llock, err) < 0)
    return -1;
  struct csr_cache_list l = { 0 };
  if (list_all (cfd, dir, &l, err) < 0)
    goto fail;
  int64_t now = (int64_t)time (NULL);
  for (size_t i = 0; i < l.n; i++)
    {
      struct csr_cache_entry *e = &l.v[i];
      if (older_than_s >= 0 && now - e->last_use < older_than_s)
        {
          e->skipped = "used recently";
          continue;
        }
      int rc = e->kind == CSR_CACHE_ROOTFS  ? prune_tree (cfd, dir, e, err)
               : e->kind == CSR_CACHE_LAYER ? csr_cache_prune_layer (lfd, dir, e, err)
                                            : prune_file (cfd, dir, e, err);
      if (rc < 0)
        goto fail;
    }
  csr_cache_prune_orphan_locks (cfd);
  if (lfd >= 0)
    csr_cache_prune_layers_done (lfd, &l);
  *out = l.v;
  *n = l.n;
  return 0;
fail:
  csr_cache_entries_release (l.v, l.n);
  return -1;
}

const char *
csr_cache_kind_name (enum csr_cache_kind k)
{
  switch (k)
    {
    case CSR_CACHE_ROOTFS:
      return "rootfs";
    case CSR_CACHE_LAYER:
      return "layer";
    case CSR_CACHE_GATE:
      return "gate";
    case CSR_CACHE_SECCOMP:
      return "seccomp";
    }
  return "unknown";
}
