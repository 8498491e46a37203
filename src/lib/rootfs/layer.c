/* csrun — package layers: the cache (CACHE_DIR/layers/<key>, its manifest
 * and json), the check before use, and the build under the lock (see
 * layer.h). */
#include "config.h"
#include "layer.h"

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
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/log.h"
#include "../util/trust.h"
#include "cache-internal.h"
#include "rootfs.h"
#define JSON_MAX (16u << 20)
#define MANIFEST_MAX (64u << 20)

bool
csr_layer_valid_name (const char *name)
{
  size_t n = strlen (name);
  if (n < 2 || n > 128)
    return false;
  for (size_t i = 0; i < n; i++)
    {
      char c = name[i];
      bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
      if (!(alnum || (i > 0 && (c == '+' || c == '-' || c == '.'))))
        return false;
    }
  return true;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* PKGS sorted, duplicates dropped, into a new array (the strings copied). */
static int
sorted_unique (const char *const *pkgs, size_t n, char ***out, size_t *n_out, csr_error **err)
{
  char **v = calloc (n + 1, sizeof *v);
  if (v == NULL)
    return csr_error_errno (err, "layer: cannot allocate");
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if ((v[k++] = strdup (pkgs[i])) == NULL)
      {
        for (size_t j = 0; j < k; j++)
          free (v[j]);
        free (v);
        return csr_error_errno (err, "layer: cannot allocate");
      }
  qsort (v, k, sizeof *v, cmp_str);
  size_t u = 0;
  for (size_t i = 0; i < k; i++)
    {
      if (u > 0 && strcmp (v[u - 1], v[i]) == 0)
        {
          free (v[i]);
          continue;
        }
      v[u++] = v[i];
    }
  v[u] = NULL;
  *out = v;
  *n_out = u;
  return 0;
}

static void
strv_free (char **v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    free (v[i]);
  free (v);
}

int
csr_layer_key (const char *base_sha256, const char *const *pkgs, size_t n,
               char key[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  char **v;
  size_t u;
  if (sorted_unique (pkgs, n, &v, &u, err) < 0)
    return -1;
  struct csr_sha256 h;
  csr_sha256_init (&h);
  static const char head[] = "csrun-layer 1\n";
  csr_sha256_update (&h, head, sizeof head - 1);
  csr_sha256_update (&h, base_sha256, strlen (base_sha256));
  csr_sha256_update (&h, "\n", 1);
  for (size_t i = 0; i < u; i++)
    {
      csr_sha256_update (&h, v[i], strlen (v[i]));
      csr_sha256_update (&h, "\n", 1);
    }
  strv_free (v, u);
  return csr_sha256_final (&h, key) < 0 ? csr_error_set (err, 0, "layer: sha256") : 0;
}

void
csr_layer_free (struct csr_layer *l)
{
  if (l == NULL)
    return;
  free (l->dir);
  strv_free (l->asked, l->n_asked);
  csr_layer_pkgs_free (l->pkgs, l->n_pkgs);
  free (l->rebuilt_why);
  if (l->use_fd >= 0)
    close (l->use_fd);
  free (l);
}

static void
layer_freep (struct csr_layer **l)
{
  csr_layer_free (*l);
}
#define cleanup_layer __attribute__ ((cleanup (layer_freep)))

/* ---------------------------------------------------------------- the json */

void
csr_layer_jgen_contents (struct csr_jgen *w, const struct csr_layer *l)
{
  csr_jgen_kv_strv (w, "asked", (const char *const *)l->asked);
  for (int pass = 0; pass < 2; pass++)
    {
      csr_jgen_str (w, pass == 0 ? "packages" : "in_base");
      csr_jgen_array_open (w);
      for (size_t i = 0; i < l->n_pkgs; i++)
        {
          if (l->pkgs[i].in_base != (pass == 1))
            continue;
          csr_jgen_map_open (w);
          csr_jgen_kv_str (w, "name", l->pkgs[i].name);
          csr_jgen_kv_str (w, "version", l->pkgs[i].version);
          csr_jgen_kv_str (w, "arch", l->pkgs[i].arch);
          csr_jgen_map_close (w);
        }
      csr_jgen_array_close (w);
    }
  csr_jgen_kv_int (w, "files", (long long)l->files);
  csr_jgen_kv_int (w, "bytes", (long long)l->bytes);
}

static char *
layer_json (const struct csr_layer *l, size_t *len, csr_error **err)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, true, err) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_int (&w, "format", 1);
  csr_jgen_kv_str (&w, "key", l->key);
  csr_jgen_kv_str (&w, "base_sha256", l->base_sha256);
  csr_jgen_kv_str (&w, "digest", l->digest);
  csr_layer_jgen_contents (&w, l);
  csr_jgen_map_close (&w);
  return csr_jgen_finish (&w, "the layer's json", len, err);
}

/* Read back what layer_json wrote (a file csrun made: any surprise is a
 * miss, the layer is rebuilt). */
static int
parse_layer_json (const char *text, size_t len, struct csr_layer *l)
{
  csr_error *e = NULL;
  if (csr_json_prescan (text, len, &e) < 0)
    {
      csr_error_free (e);
      return -1;
    }
  char errbuf[128];
  cleanup_yajl_val yajl_val doc = yajl_tree_parse (text, errbuf, sizeof errbuf);
  const char *digest = csr_json_str (csr_json_get (doc, "digest"));
  const char *key = csr_json_str (csr_json_get (doc, "key"));
  yajl_val lists[2] = { csr_json_get (doc, "packages"), csr_json_get (doc, "in_base") };
  if (digest == NULL || strlen (digest) != CSR_SHA256_HEX_LEN || key == NULL
      || strcmp (key, l->key) != 0 || !YAJL_IS_ARRAY (lists[0]) || !YAJL_IS_ARRAY (lists[1]))
    return -1;
  memcpy (l->digest, digest, sizeof l->digest);
  size_t total = lists[0]->u.array.len + lists[1]->u.array.len;
  l->pkgs = calloc (total ? total : 1, sizeof *l->pkgs);
  if (l->pkgs == NULL)
    return -1;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < lists[pass]->u.array.len; i++)
      {
        yajl_val o = csr_json_at (lists[pass], i);
        const char *n = csr_json_str (csr_json_get (o, "name"));
        const char *v = csr_json_str (csr_json_get (o, "version"));
        const char *a = csr_json_str (csr_json_get (o, "arch"));
        if (n == NULL || v == NULL || a == NULL)
          return -1;
        struct csr_layer_pkg *p = &l->pkgs[l->n_pkgs++];
        p->in_base = pass == 1;
        if ((p->name = strdup (n)) == NULL || (p->version = strdup (v)) == NULL
            || (p->arch = strdup (a)) == NULL)
          return -1;
      }
  yajl_val files = csr_json_get (doc, "files"), bytes = csr_json_get (doc, "bytes");
  if (YAJL_IS_INTEGER (files))
    l->files = (size_t)YAJL_GET_INTEGER (files);
  if (YAJL_IS_INTEGER (bytes))
    l->bytes = (unsigned long long)YAJL_GET_INTEGER (bytes);
  return 0;
}

/* ---------------------------------------------------------------- using a cached layer */

/* 0: LAYERS/<key> is there and passed its check (L filled); 1: it is not
 * there; 2: it is there but must not be used (*WHY); -1: csrun failed. */
static int
try_cached (int lfd, struct csr_layer *l, char **why, csr_error **err)
{
  *why = NULL;
  struct stat st;
  if (fstatat (lfd, l->key, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 1 : csr_error_errno (err, "layer '%s'", l->key);
  char name[CSR_SHA256_HEX_LEN + 16];
  cleanup_free char *mtext = NULL, *jtext = NULL;
  size_t mlen = 0, jlen = 0;
  csr_error *e = NULL;
  snprintf (name, sizeof name, "%s.manifest", l->key);
  if (csr_trust_read_at (lfd, name, MANIFEST_MAX, &mtext, &mlen, &e) < 0)
    {
      int r = asprintf (why, "its manifest: %s", csr_error_text (e));
      csr_error_free (e);
      return r < 0 ? csr_error_errno (err, "layer") : 2;
    }
  snprintf (name, sizeof name, "%s.json", l->key);
  if (csr_trust_read_at (lfd, name, JSON_MAX, &jtext, &jlen, &e) < 0)
    {
      int r = asprintf (why, "its json: %s", csr_error_text (e));
      csr_error_free (e);
      return r < 0 ? csr_error_errno (err, "layer") : 2;
    }
  char digest[CSR_SHA256_HEX_LEN + 1];
  if (csr_sha256_buf (mtext, mlen, digest, err) < 0)
    return -1;
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  int ret = 2;
  if (parse_layer_json (jtext, jlen, l) < 0)
    ret = asprintf (why, "its json is not csrun's") < 0 ? -1 : 2;
  else if (strcmp (digest, l->digest) != 0)
    ret = asprintf (why, "its manifest's digest is %.16s..., not %.16s...", digest, l->digest) < 0
              ? -1
              : 2;
  else if (csr_manifest_parse (mtext, mlen, &m, &e) < 0)
    {
      ret = asprintf (why, "its manifest: %s", csr_error_text (e)) < 0 ? -1 : 2;
      csr_error_freep (&e);
    }
  else
    {
      cleanup_close int tfd = openat (lfd, l->key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (tfd < 0)
        ret = asprintf (why, "cannot be opened: %s", strerror (errno)) < 0 ? -1 : 2;
      else
        {
          int r = csr_layer_check (tfd, &m, why, err);
          ret = r < 0 ? -1 : r == 0 ? 0 : 2;
        }
    }
  csr_manifest_release (&m);
  if (ret < 0 && *err == NULL)
    csr_error_errno (err, "layer");
  if (ret != 0)
    {
      csr_layer_pkgs_free (l->pkgs, l->n_pkgs);
      l->pkgs = NULL;
      l->n_pkgs = 0;
    }
  return ret;
}

/* ---------------------------------------------------------------- removing */

/* Take LAYERS/<key> and its files away (lock held): renamed first. */
static int
remove_layer (int lfd, const char *ldir, const char *key, csr_error **err)
{
  char aside[64], name[CSR_SHA256_HEX_LEN + 16];
  snprintf (aside, sizeof aside, TMP_PREFIX "old-%.16s-%ld", key, (long)getpid ());
  if (renameat (lfd, key, lfd, aside) < 0 && errno != ENOENT)
    return csr_error_errno (err, "rename '%s/%s'", ldir, key);
  static const char *const sfx[] = { ".json", ".manifest" };
  for (size_t i = 0; i < 2; i++)
    {
      snprintf (name, sizeof name, "%s%s", key, sfx[i]);
      if (unlinkat (lfd, name, 0) < 0 && errno != ENOENT)
        return csr_error_errno (err, "remove '%s/%s'", ldir, name);
    }
  cleanup_free char *path = NULL;
  if (asprintf (&path, "%s/%s", ldir, aside) < 0)
    return csr_error_errno (err, "layer");
  csr_error *e = NULL;
  if (csr_rm_rf (path, &e) < 0)
    {
      csr_debug ("layer: %s", csr_error_text (e));
      csr_error_free (e);
    }
  return 0;
}

/* With the lock held, temporary directories are the remains of a crash. */
static void
remove_stale (int lfd, const char *ldir)
{
  (void)csr_cache_remove_tmp (lfd, ldir, "layer", false);
}

/* ---------------------------------------------------------------- ensure */

int csr_layer_build (int base_fd, const char *base_dir, const char *tmp, struct csr_layer *l,
                     struct csr_manifest *m, char **known, csr_error **err);

/* Build L into a temporary directory of LAYERS and publish it (lock held). */
static int
build_and_publish (int lfd, const char *ldir, const char *base_dir, struct csr_layer *l,
                   csr_error **err)
{
  cleanup_close int base_fd = open (base_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base_fd < 0)
    return csr_error_errno (err, "layer: open the base rootfs '%s'", base_dir);
  cleanup_free char *tmp = NULL;
  if (asprintf (&tmp, "%s/" TMP_PREFIX "%.16s-XXXXXX", ldir, l->key) < 0)
    return csr_error_errno (err, "layer");
  if (mkdtemp (tmp) == NULL)
    return csr_error_errno (err, "create a directory in '%s'", ldir);
  struct csr_manifest m;
  memset (&m, 0, sizeof m);
  /* What earlier builds found in this base (a miss of any kind: none). */
  char kname[CSR_SHA256_HEX_LEN + 16];
  snprintf (kname, sizeof kname, "base-%s.known", l->base_sha256);
  cleanup_free char *known = NULL;
  size_t klen = 0;
  csr_error *ke = NULL;
  if (csr_trust_read_at (lfd, kname, 4u << 20, &known, &klen, &ke) < 0)
    csr_error_freep (&ke);
  int ret = csr_layer_build (base_fd, base_dir, tmp, l, &m, &known, err);
  if (ret == 0 && known && csr_trust_write_at (lfd, kname, known, strlen (known), 0644, &ke) < 0)
    {
      csr_debug ("layer: %s", csr_error_text (ke));
      csr_error_freep (&ke);
    }
  char name[CSR_SHA256_HEX_LEN + 16];
  cleanup_free char *mtext = NULL, *jtext = NULL;
  size_t mlen = 0, jlen = 0;
  if (ret < 0)
    goto out;
  ret = -1;
  if (csr_manifest_format (&m, &mtext, &mlen, err) < 0
      || csr_sha256_buf (mtext, mlen, l->digest, err) < 0)
    goto out;
  l->files = m.n;
  l->bytes = m.bytes;
  if ((jtext = layer_json (l, &jlen, err)) == NULL)
    goto out;
  {
    cleanup_close int tfd = open (tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tfd < 0 || syncfs (tfd) < 0)
      {
        csr_error_errno (err, "sync '%s'", tmp);
        goto out;
      }
  }
  snprintf (name, sizeof name, "%s.manifest", l->key);
  if (csr_trust_write_at (lfd, name, mtext, mlen, 0444, err) < 0)
    goto out;
  snprintf (name, sizeof name, "%s.json", l->key);
  if (csr_trust_write_at (lfd, name, jtext, jlen, 0444, err) < 0)
    goto out;
  {
    cleanup_free char *tree = NULL;
    if (asprintf (&tree, "%s/tree", strrchr (tmp, '/') + 1) < 0)
      {
        csr_error_errno (err, "layer");
        goto out;
      }
    if (renameat (lfd, tree, lfd, l->key) < 0)
      {
        csr_error_errno (err, "rename the layer into '%s/%s'", ldir, l->key);
        goto out;
      }
    if (fchmodat (lfd, l->key, 0555, 0) < 0)
      {
        csr_error_errno (err, "chmod '%s/%s'", ldir, l->key);
        goto out;
      }
  }
  if (fsync (lfd) < 0)
    csr_debug ("layer: fsync '%s': %s", ldir, strerror (errno));
  ret = 0;
out:
  csr_manifest_release (&m);
  csr_error *e = NULL;
  if (csr_rm_rf (tmp, &e) < 0)
    {
      csr_debug ("layer: %s", csr_error_text (e));
      csr_error_free (e);
    }
  return ret;
}

int
csr_layer_ensure (const char *base_dir, const char *base_sha256, const char *cache_dir,
                  const char *const *pkgs, size_t n, struct csr_layer **out, csr_error **err)
{
  *out = NULL;
  if (n == 0)
    return csr_error_set (err, EINVAL, "no package given"), CSR_LAYER_BAD_PACKAGE;
  if (n > CSR_LAYER_MAX_PACKAGES)
    return csr_error_set (err, E2BIG, "at most %d packages in a layer", CSR_LAYER_MAX_PACKAGES),
           CSR_LAYER_BAD_PACKAGE;
  for (size_t i = 0; i < n; i++)
    if (!csr_layer_valid_name (pkgs[i]))
      return csr_error_set (err, 0, "'%s' is not a Debian package name", pkgs[i]),
             CSR_LAYER_BAD_PACKAGE;
  if (base_sha256 == NULL || strlen (base_sha256) != CSR_SHA256_HEX_LEN)
    return csr_error_set (err, EINVAL,
                          "packages can be added to a rootfs tarball only (a layer is keyed by "
                          "its digest), not to the directory '%s'",
                          base_dir);

  cleanup_layer struct csr_layer *l = calloc (1, sizeof *l);
  if (l == NULL)
    return csr_error_errno (err, "layer");
  l->use_fd = -1;
  snprintf (l->base_sha256, sizeof l->base_sha256, "%s", base_sha256);
  if (sorted_unique (pkgs, n, &l->asked, &l->n_asked, err) < 0
      || csr_layer_key (base_sha256, pkgs, n, l->key, err) < 0)
    return -1;

  cleanup_free char *cdir = NULL;
  cleanup_close int cfd = csr_trust_open_dir ("cache directory", cache_dir, 0700, &cdir, err);
  if (cfd < 0)
    return -1;
  cleanup_close int lfd = csr_trust_open_subdir (cfd, cdir, LAYERS_DIR, 0700, err);
  if (lfd < 0)
    return -1;
  cleanup_free char *ldir = NULL;
  if (asprintf (&ldir, "%s/" LAYERS_DIR, cdir) < 0 || asprintf (&l->dir, "%s/%s", ldir, l->key) < 0)
    return csr_error_errno (err, "layer");
  /* Before the layer is trusted to be there, and kept while it is used:
   * `csrun cache prune` leaves it alone (a layer it removed meanwhile is a
   * miss, built again below). */
  l->use_fd = csr_rootfs_use_lock (lfd, ldir, l->key);

  cleanup_free char *why = NULL;
  int r = try_cached (lfd, l, &why, err);
  if (r == 0)
    {
      *out = steal_pointer (&l);
      return 0;
    }
  if (r < 0)
    return -1;
  cleanup_close int lock = csr_cache_lock_dir (lfd, ldir, 0600, err);
  if (lock < 0)
    return -1;
  free (why);
  why = NULL;
  r = try_cached (lfd, l, &why, err); /* another csrun built it meanwhile? */
  if (r == 0)
    {
      *out = steal_pointer (&l);
      return 0;
    }
  if (r < 0)
    return -1;
  if (r == 2)
    {
      csr_debug ("layer %s: %s: rebuilding it", l->key, why);
      l->rebuilt_why = steal_pointer (&why);
      if (remove_layer (lfd, ldir, l->key, err) < 0)
        return -1;
    }
  remove_stale (lfd, ldir);
  r = build_and_publish (lfd, ldir, base_dir, l, err);
  if (r < 0)
    return r;
  l->built_now = true;
  *out = steal_pointer (&l);
  return 0;
}
