/* csrun — the package layers in the cache (CACHE_DIR/layers, see layer.h)
 * for `csrun cache ls` and `csrun cache prune`: each <key> tree with its
 * .manifest, .json and .use lock, and the base-<sha256>.known verdicts. */
#include "config.h"
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/trust.h"
#include "cache-internal.h"

#define JSON_MAX (16u << 20)
#define KNOWN_PREFIX "base-"
#define KNOWN_SUFFIX ".known"

/* ---------------------------------------------------------------- listing */

static char **
json_strv (yajl_val arr)
{
  size_t n = YAJL_IS_ARRAY (arr) ? arr->u.array.len : 0;
  char **v = calloc (n + 1, sizeof *v);
  if (v == NULL)
    return NULL;
  for (size_t i = 0, k = 0; i < n; i++)
    {
      const char *s = csr_json_str (csr_json_at (arr, i));
      if (s != NULL && (v[k++] = strdup (s)) == NULL)
        return v; /* cut short: still a list */
    }
  return v;
}

/* What LAYERS/<KEY>.json says (a file csrun made: what can't be read is
 * left out, the layer is listed all the same). */
static void
read_json (int lfd, const char *key, struct csr_cache_entry *e)
{
  char name[CSR_SHA256_HEX_LEN + 16];
  snprintf (name, sizeof name, "%.64s.json", key);
  cleanup_free char *text = NULL;
  size_t len = 0;
  cleanup_error csr_error *err = NULL;
  if (csr_trust_read_at (lfd, name, JSON_MAX, &text, &len, &err) < 0
      || csr_json_prescan (text, len, &err) < 0)
    {
      csr_debug ("cache: layer %s: %s", key, csr_error_text (err));
      return;
    }
  char errbuf[128];
  cleanup_yajl_val yajl_val doc = yajl_tree_parse (text, errbuf, sizeof errbuf);
  const char *k = csr_json_str (csr_json_get (doc, "key"));
  if (k == NULL || strcmp (k, key) != 0)
    {
      csr_debug ("cache: layer %s: its json is not csrun's", key);
      return;
    }
  const char *base = csr_json_str (csr_json_get (doc, "base_sha256"));
  if (base && csr_cache_is_hex (base))
    e->base_sha256 = strdup (base);
  e->asked = json_strv (csr_json_get (doc, "asked"));
  yajl_val pk = csr_json_get (doc, "packages");
  size_t n = YAJL_IS_ARRAY (pk) ? pk->u.array.len : 0;
  e->pkgs = calloc (n ? n : 1, sizeof *e->pkgs);
  for (size_t i = 0; e->pkgs && i < n; i++)
    {
      yajl_val o = csr_json_at (pk, i);
      const char *pn = csr_json_str (csr_json_get (o, "name"));
      const char *pv = csr_json_str (csr_json_get (o, "version"));
      if (pn == NULL || pv == NULL)
        continue;
      struct csr_cache_pkg *p = &e->pkgs[e->n_pkgs];
      p->name = strdup (pn);
      p->version = strdup (pv);
      if (p->name == NULL || p->version == NULL)
        {
          free (p->name);
          free (p->version);
          p->name = p->version = NULL;
          break;
        }
      e->n_pkgs++;
    }
}

static uint64_t
file_bytes (int dfd, const char *key, const char *suffix)
{
  char name[CSR_SHA256_HEX_LEN + 16];
  snprintf (name, sizeof name, "%.64s%s", key, suffix);
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode))
    return (uint64_t)st.st_blocks * 512;
  return 0;
}

int
csr_cache_list_layers (int cfd, const char *dir, struct csr_cache_list *l, csr_error **err)
{
  cleanup_error csr_error *e0 = NULL;
  int lfd = csr_trust_open_subdir (cfd, dir, LAYERS_DIR, 0, &e0);
  if (lfd < 0)
    {
      if (e0 && e0->status == ENOENT)
        return 0;
      csr_error_set (err, 0, "%s", csr_error_text (e0));
      return -1;
    }
  cleanup_dir DIR *d = fdopendir (lfd);
  if (d == NULL)
    {
      close (lfd);
      return csr_error_errno (err, "'%s/" LAYERS_DIR "'", dir);
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      struct stat st;
      if (!csr_cache_is_hex (de->d_name) || fstatat (lfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || csr_trust_check_entry (&st, false, de->d_name, NULL) < 0)
        continue; /* not a layer csrun made */
      struct csr_cache_entry *e = csr_cache_list_add (l);
      if (e == NULL || asprintf (&e->name, LAYERS_DIR "/%s", de->d_name) < 0)
        {
          if (e)
            e->name = NULL;
          return csr_error_errno (err, "cannot allocate");
        }
      if (asprintf (&e->path, "%s/" LAYERS_DIR "/%s", dir, de->d_name) < 0)
        {
          e->path = NULL;
          return csr_error_errno (err, "cannot allocate");
        }
      e->kind = CSR_CACHE_LAYER;
      e->bytes = csr_cache_tree_bytes (e->path) + file_bytes (lfd, de->d_name, MANIFEST_SUFFIX)
                 + file_bytes (lfd, de->d_name, ".json");
      /* Published by rename: the tree's mtime is when it was built. */
      e->last_use = (int64_t)st.st_mtim.tv_sec;
      char use[CSR_SHA256_HEX_LEN + sizeof USE_SUFFIX];
      snprintf (use, sizeof use, "%.64s" USE_SUFFIX, de->d_name);
      if (fstatat (lfd, use, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtim.tv_sec > e->last_use)
        e->last_use = (int64_t)st.st_mtim.tv_sec;
      e->in_use = csr_cache_in_use (lfd, de->d_name);
      read_json (lfd, de->d_name, e);
    }
  return 0;
}

/* ---------------------------------------------------------------- pruning */

int
csr_cache_layers_open (int cfd, const char *dir, int *lfd, int *lock, csr_error **err)
{
  *lfd = *lock = -1;
  cleanup_error csr_error *e0 = NULL;
  int fd = csr_trust_open_subdir (cfd, dir, LAYERS_DIR, 0, &e0);
  if (fd < 0)
    {
      if (e0 && e0->status == ENOENT)
        return 0;
      return csr_error_set (err, 0, "%s", csr_error_text (e0));
    }
  int lk = openat (fd, LOCK_NAME, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lk < 0)
    {
      csr_error_errno (err, "lock '%s/" LAYERS_DIR "/" LOCK_NAME "'", dir);
      close (fd);
      return -1;
    }
  while (flock (lk, LOCK_EX) < 0)
    if (errno != EINTR)
      {
        csr_error_errno (err, "lock '%s/" LAYERS_DIR "/" LOCK_NAME "'", dir);
        close (lk);
        close (fd);
        return -1;
      }
  *lfd = fd;
  *lock = lk;
  return 0;
}

int
csr_cache_prune_layer (int lfd, const char *dir, struct csr_cache_entry *e, csr_error **err)
{
  if (lfd < 0)
    return csr_error_set (err, 0, "'%s/" LAYERS_DIR "': not open", dir);
  const char *key = e->name + strlen (LAYERS_DIR "/");
  char use[CSR_SHA256_HEX_LEN + sizeof USE_SUFFIX];
  snprintf (use, sizeof use, "%.64s" USE_SUFFIX, key);
  cleanup_close int ufd = csr_cache_take_use_lock (lfd, use, e);
  if (ufd < 0)
    return 0;
  cleanup_free char *aside = NULL, *aside_path = NULL;
  if (asprintf (&aside, TMP_PREFIX "prune-%.16s-%ld", key, (long)getpid ()) < 0
      || asprintf (&aside_path, "%s/" LAYERS_DIR "/%s", dir, aside) < 0)
    return csr_error_errno (err, "cannot allocate");
  /* Renamed first: no run finds a half-removed layer under its name (its
   * check would fail and rebuild it, but not while we remove it). */
  if (renameat (lfd, key, lfd, aside) < 0)
    return csr_error_errno (err, "rename '%s'", e->path);
  static const char *const sfx[] = { MANIFEST_SUFFIX, ".json", USE_SUFFIX };
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++)
    {
      char name[CSR_SHA256_HEX_LEN + 16];
      snprintf (name, sizeof name, "%.64s%s", key, sfx[i]);
      /* The use lock last, still held: a run waiting for it finds the
       * name gone and takes a new one. */
      if (unlinkat (lfd, name, 0) < 0 && errno != ENOENT)
        return csr_error_errno (err, "remove '%s/" LAYERS_DIR "/%s'", dir, name);
    }
  if (fsync (lfd) < 0)
    csr_debug ("cache: fsync '%s/" LAYERS_DIR "': %s", dir, strerror (errno));
  /* csr_rm_rf gives the read-only directories u+rwx as it goes down. */
  if (csr_rm_rf (aside_path, err) < 0)
    return -1;
  e->removed = true;
  return 0;
}

/* Is HEX the base of a layer of L that is still there?  A layer whose
 * base can't be told counts for every base. */
static bool
base_kept (const struct csr_cache_list *l, const char *hex)
{
  for (size_t i = 0; i < l->n; i++)
    {
      const struct csr_cache_entry *e = &l->v[i];
      if (e->kind == CSR_CACHE_LAYER && !e->removed
          && (e->base_sha256 == NULL || strcmp (e->base_sha256, hex) == 0))
        return true;
    }
  return false;
}

void
csr_cache_prune_layers_done (int lfd, const struct csr_cache_list *l)
{
  int fd = dup (lfd);
  cleanup_dir DIR *d = csr_fdopendir_or_close (fd);
  if (d == NULL)
    return;
  rewinddir (d);
  const size_t pl = strlen (KNOWN_PREFIX), sl = strlen (KNOWN_SUFFIX);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      char hex[CSR_SHA256_HEX_LEN + 1];
      struct stat st;
      if (strlen (de->d_name) != pl + CSR_SHA256_HEX_LEN + sl
          || strncmp (de->d_name, KNOWN_PREFIX, pl) != 0
          || strcmp (de->d_name + pl + CSR_SHA256_HEX_LEN, KNOWN_SUFFIX) != 0)
        continue;
      memcpy (hex, de->d_name + pl, CSR_SHA256_HEX_LEN);
      hex[CSR_SHA256_HEX_LEN] = '\0';
      /* What a later build over that base would not download again: only
       * worth keeping with a layer over that base. */
      if (!csr_cache_is_hex (hex) || base_kept (l, hex)
          || fstatat (lfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0
          || csr_trust_check_entry (&st, true, de->d_name, NULL) < 0)
        continue;
      if (unlinkat (lfd, de->d_name, 0) < 0 && errno != ENOENT)
        csr_debug ("cache: remove '%s': %s", de->d_name, strerror (errno));
    }
  csr_cache_prune_orphan_locks (lfd);
}
