/* csrun — package layers: the trees.  An extracted package is compared with
 * the base rootfs, merged into the layer (paths resolved through the
 * base's symlinks, nothing of the base replaced, no special files, no
 * setuid), the finished layer sealed read-only with a manifest, and a
 * cached one checked before each use (see layer.h for the rules). */
#include "config.h"
#include "layer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/trust.h"
#include "rootfs.h"

#define MAX_LINKS 40

int
csr_layer_extract (const char *deb, const char *scratch, const char *control, csr_error **err)
{
  char *x[] = { (char *)"dpkg-deb", (char *)"-x", (char *)deb, (char *)scratch, NULL };
  char *e[] = { (char *)"dpkg-deb", (char *)"-e", (char *)deb, (char *)control, NULL };
  char *argvs[2][5];
  memcpy (argvs[0], x, sizeof x);
  memcpy (argvs[1], e, sizeof e);
  for (int i = 0; i < 2; i++)
    {
      cleanup_free char *out = NULL;
      int rc = csr_layer_spawn (argvs[i], NULL, &out, err);
      if (rc < 0)
        return csr_error_wrap (err, "extract '%s' (csrun needs dpkg-deb)", deb);
      if (rc != 0)
        {
          size_t n = out ? strcspn (out, "\n") : 0;
          return csr_error_set (err, 0, "extract '%s': dpkg-deb %s: %.*s", deb, argvs[i][1], (int)n,
                                out ? out : "");
        }
    }
  return 0;
}

/* ---------------------------------------------------------------- paths */

/* PATH (relative, as the package names it) as the base tree BASE_FD sees
 * it: every directory component that is a symlink in the base is followed
 * (absolute targets from the base's top, ".." clamped there), and the last
 * one too when RESOLVE_LAST.  OUT receives the path without a leading '/'
 * ("" is the top). */
static int
canon (int base_fd, const char *path, bool resolve_last, char *out, size_t size)
{
  char todo[PATH_MAX], done[PATH_MAX] = "";
  if (snprintf (todo, sizeof todo, "%s", path) >= (int)sizeof todo)
    return -1;
  int links = 0;
  while (todo[0])
    {
      char *slash = strchr (todo, '/');
      char comp[NAME_MAX + 1];
      size_t clen = slash ? (size_t)(slash - todo) : strlen (todo);
      if (clen > NAME_MAX)
        return -1;
      memcpy (comp, todo, clen);
      comp[clen] = '\0';
      const char *rest = slash ? slash + 1 : "";
      bool last = *rest == '\0';
      char rest_copy[PATH_MAX];
      snprintf (rest_copy, sizeof rest_copy, "%s", rest);
      if (clen == 0 || strcmp (comp, ".") == 0)
        {
          memmove (todo, rest_copy, strlen (rest_copy) + 1);
          continue;
        }
      if (strcmp (comp, "..") == 0)
        {
          char *p = strrchr (done, '/');
          if (p)
            *p = '\0';
          else
            done[0] = '\0';
          memmove (todo, rest_copy, strlen (rest_copy) + 1);
          continue;
        }
      char cand[PATH_MAX];
      if (snprintf (cand, sizeof cand, "%s%s%s", done, done[0] ? "/" : "", comp)
          >= (int)sizeof cand)
        return -1;
      struct stat st;
      if ((!last || resolve_last) && fstatat (base_fd, cand, &st, AT_SYMLINK_NOFOLLOW) == 0
          && S_ISLNK (st.st_mode) && links++ < MAX_LINKS)
        {
          char target[PATH_MAX];
          ssize_t n = readlinkat (base_fd, cand, target, sizeof target - 1);
          if (n < 0)
            return -1;
          target[n] = '\0';
          if (target[0] == '/')
            done[0] = '\0';
          if (snprintf (todo, sizeof todo, "%s%s%s", target, *rest_copy ? "/" : "", rest_copy)
              >= (int)sizeof todo)
            return -1;
          continue;
        }
      snprintf (done, sizeof done, "%s", cand);
      memmove (todo, rest_copy, strlen (rest_copy) + 1);
    }
  if (snprintf (out, size, "%s", done) >= (int)size)
    return -1;
  return 0;
}

/* Left out of layers: documentation (but copyright files), manual pages. */
static bool
is_doc (const char *path)
{
  static const char *const prefixes[]
      = { "usr/share/man/", "usr/share/info/", "usr/share/lintian/", "usr/share/bug/" };
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    {
      size_t n = strlen (prefixes[i]);
      /* The directory itself too ("usr/share/man"). */
      if (strncmp (path, prefixes[i], n - 1) == 0 && (path[n - 1] == '/' || path[n - 1] == '\0'))
        return true;
    }
  if (strncmp (path, "usr/share/doc/", 14) == 0)
    {
      const char *base = strrchr (path, '/') + 1;
      return strcmp (base, "copyright") != 0;
    }
  return false;
}

/* ---------------------------------------------------------------- walking */

typedef int (*walk_fn) (void *ctx, int dfd, const char *name, const char *path,
                        const struct stat *st, csr_error **err);

struct names
{
  char **v;
  size_t n;
};

static void
names_release (struct names *ns)
{
  for (size_t i = 0; i < ns->n; i++)
    free (ns->v[i]);
  free (ns->v);
}

static int
cmp_name (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The entries of directory DFD, sorted (read before anything changes it). */
static int
list_dir (int dfd, const char *path, struct names *ns, csr_error **err)
{
  memset (ns, 0, sizeof *ns);
  int fd = dup (dfd);
  if (fd < 0)
    return csr_error_errno (err, "read '%s'", path);
  cleanup_dir DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return csr_error_errno (err, "read '%s'", path);
    }
  rewinddir (d);
  size_t cap = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (ns->n == cap)
        {
          cap = cap ? cap * 2 : 16;
          char **nv = realloc (ns->v, cap * sizeof *nv);
          if (nv == NULL)
            goto nomem;
          ns->v = nv;
        }
      if ((ns->v[ns->n] = strdup (de->d_name)) == NULL)
        goto nomem;
      ns->n++;
    }
  if (ns->n)
    qsort (ns->v, ns->n, sizeof *ns->v, cmp_name);
  return 0;
nomem:
  names_release (ns);
  return csr_error_errno (err, "read '%s'", path);
}

/* Call FN for every entry below DFD (PATH its relative path, "" at the
 * top), a directory before its entries; FN returns 1 to skip a directory's
 * entries.  POST (may be NULL) is called for a directory after them. */
static int
walk (int dfd, const char *path, walk_fn fn, walk_fn post, void *ctx, csr_error **err)
{
  struct names ns;
  if (list_dir (dfd, path[0] ? path : ".", &ns, err) < 0)
    return -1;
  int ret = -1;
  for (size_t i = 0; i < ns.n; i++)
    {
      const char *name = ns.v[i];
      cleanup_free char *sub = NULL;
      if (asprintf (&sub, "%s%s%s", path, path[0] ? "/" : "", name) < 0)
        {
          csr_error_errno (err, "walk '%s'", path);
          goto out;
        }
      struct stat st;
      if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue; /* moved away by FN */
          csr_error_errno (err, "stat '%s'", sub);
          goto out;
        }
      int r = fn (ctx, dfd, name, sub, &st, err);
      if (r < 0)
        goto out;
      if (r == 0 && S_ISDIR (st.st_mode))
        {
          cleanup_close int sfd
              = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sfd < 0)
            {
              if (errno == ENOENT)
                continue;
              csr_error_errno (err, "open '%s'", sub);
              goto out;
            }
          if (walk (sfd, sub, fn, post, ctx, err) < 0)
            goto out;
          if (post && post (ctx, dfd, name, sub, &st, err) < 0)
            goto out;
        }
    }
  ret = 0;
out:
  names_release (&ns);
  return ret;
}

/* ---------------------------------------------------------------- in the base? */

struct in_base_ctx
{
  int base_fd;
  bool found;
};

static int
in_base_one (void *vctx, int dfd, const char *name, const char *path, const struct stat *st,
             csr_error **err)
{
  (void)dfd;
  (void)name;
  (void)err;
  struct in_base_ctx *c = vctx;
  if (c->found)
    return 1;
  if (S_ISDIR (st->st_mode) || is_doc (path) || strncmp (path, "usr/share/locale/", 17) == 0)
    return 0;
  char where[PATH_MAX];
  struct stat bst;
  if (canon (c->base_fd, path, false, where, sizeof where) == 0 && where[0]
      && fstatat (c->base_fd, where, &bst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR (bst.st_mode))
    {
      csr_debug ("layer: the base has '%s'", where);
      c->found = true;
      return 1;
    }
  return 0;
}

int
csr_layer_in_base (int base_fd, int scratch_fd, bool *in_base, csr_error **err)
{
  struct in_base_ctx c = { .base_fd = base_fd, .found = false };
  if (walk (scratch_fd, "", in_base_one, NULL, &c, err) < 0)
    return -1;
  *in_base = c.found;
  return 0;
}

/* ---------------------------------------------------------------- merging */

struct merge_ctx
{
  int base_fd, layer_fd;
};

/* Make the directories of PATH (relative) in DFD, 0755. */
static int
mkdirs_at (int dfd, const char *path, bool with_last, csr_error **err)
{
  char buf[PATH_MAX];
  snprintf (buf, sizeof buf, "%s", path);
  size_t n = strlen (buf);
  for (size_t i = 0; i <= n; i++)
    {
      if (buf[i] != '/' && buf[i] != '\0')
        continue;
      if (buf[i] == '\0' && !with_last)
        break;
      char c = buf[i];
      buf[i] = '\0';
      if (buf[0] && mkdirat (dfd, buf, 0755) < 0 && errno != EEXIST)
        return csr_error_errno (err, "layer: mkdir '%s'", buf);
      struct stat st;
      if (buf[0] && (fstatat (dfd, buf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode)))
        return csr_error_set (err, ENOTDIR, "layer: '%s' is not a directory", buf);
      buf[i] = c;
    }
  return 0;
}

static int
merge_one (void *vctx, int dfd, const char *name, const char *path, const struct stat *st,
           csr_error **err)
{
  struct merge_ctx *c = vctx;
  if (is_doc (path))
    return 1;
  char where[PATH_MAX];
  if (canon (c->base_fd, path, S_ISDIR (st->st_mode), where, sizeof where) < 0 || !where[0])
    {
      csr_debug ("layer: '%s' has no place in the base: left out", path);
      return 1;
    }
  struct stat bst;
  bool base_has = fstatat (c->base_fd, where, &bst, AT_SYMLINK_NOFOLLOW) == 0;
  if (S_ISDIR (st->st_mode))
    {
      if (base_has && !S_ISDIR (bst.st_mode))
        {
          csr_debug ("layer: the base has a non-directory at '%s': left out", where);
          return 1;
        }
      csr_error *e = NULL;
      if (mkdirs_at (c->layer_fd, where, true, &e) == 0)
        return 0;
      if (e->status != ENOTDIR)
        {
          *err = e;
          return -1;
        }
      csr_debug ("layer: '%s' left out: %s", path, csr_error_text (e));
      csr_error_free (e);
      return 1;
    }
  if (!S_ISREG (st->st_mode) && !S_ISLNK (st->st_mode))
    {
      csr_debug ("layer: special file '%s' left out", path);
      return 0;
    }
  if (base_has)
    return 0; /* the base wins */
  if (S_ISREG (st->st_mode) && (st->st_mode & 07000)
      && fchmodat (dfd, name, st->st_mode & 0777 & ~(mode_t)022, 0) < 0)
    return csr_error_errno (err, "layer: chmod '%s'", path);
  if (st->st_uid != geteuid ()
      && fchownat (dfd, name, geteuid (), getegid (), AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "layer: chown '%s'", path);
  /* Every directory on the way is a real directory of the layer (never a
   * symbolic link, which renameat would follow out of it). */
  csr_error *e = NULL;
  if (mkdirs_at (c->layer_fd, where, false, &e) < 0)
    {
      bool notdir = e->status == ENOTDIR;
      if (!notdir)
        {
          *err = e;
          return -1;
        }
      csr_debug ("layer: '%s' left out: %s", path, csr_error_text (e));
      csr_error_free (e);
      return 0;
    }
  if (renameat (dfd, name, c->layer_fd, where) < 0)
    {
      if (errno == EISDIR || errno == ENOTDIR || errno == ENOTEMPTY)
        {
          csr_debug ("layer: '%s' conflicts with a directory: left out", where);
          return 0;
        }
      return csr_error_errno (err, "layer: move '%s'", path);
    }
  return 0;
}

int
csr_layer_merge (int base_fd, int scratch_fd, int layer_fd, csr_error **err)
{
  struct merge_ctx c = { .base_fd = base_fd, .layer_fd = layer_fd };
  return walk (scratch_fd, "", merge_one, NULL, &c, err);
}

/* ---------------------------------------------------------------- alternatives */

int
csr_layer_add_alternative (int base_fd, int layer_fd, const char *link, const char *target,
                           csr_error **err)
{
  char where[PATH_MAX], tw[PATH_MAX];
  struct stat st;
  if (link[0] != '/' || target[0] != '/'
      || canon (base_fd, link + 1, false, where, sizeof where) < 0 || !where[0]
      || canon (base_fd, target + 1, false, tw, sizeof tw) < 0)
    return 0;
  if (fstatat (base_fd, where, &st, AT_SYMLINK_NOFOLLOW) == 0
      || fstatat (layer_fd, where, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return 0; /* the base (or a package) has it already */
  if (fstatat (layer_fd, tw, &st, AT_SYMLINK_NOFOLLOW) < 0
      && fstatat (base_fd, tw, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return 0; /* its target is not there */
  if (mkdirs_at (layer_fd, where, false, err) < 0)
    return -1;
  if (symlinkat (target, layer_fd, where) < 0)
    return csr_error_errno (err, "layer: symlink '%s'", where);
  csr_debug ("layer: alternative /%s -> %s", where, target);
  return 0;
}

/* ---------------------------------------------------------------- sealing */

struct seal_ctx
{
  struct csr_manifest *m;
};

static int
seal_one (void *vctx, int dfd, const char *name, const char *path, const struct stat *st,
          csr_error **err)
{
  struct seal_ctx *c = vctx;
  if (S_ISDIR (st->st_mode))
    return csr_manifest_add (c->m, 'd', 0555, 0, NULL, path, err) < 0 ? -1 : 0;
  if (S_ISLNK (st->st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (dfd, name, target, sizeof target - 1);
      if (n < 0)
        return csr_error_errno (err, "layer: readlink '%s'", path);
      target[n] = '\0';
      return csr_manifest_add (c->m, 'l', 0777, (uint64_t)n, target, path, err) < 0 ? -1 : 0;
    }
  if (!S_ISREG (st->st_mode))
    return csr_error_set (err, 0, "layer: '%s' is a special file", path);
  mode_t mode = (st->st_mode & 0111) ? 0555 : 0444;
  if (fchmodat (dfd, name, mode, 0) < 0)
    return csr_error_errno (err, "layer: chmod '%s'", path);
  cleanup_close int fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  char hex[CSR_SHA256_HEX_LEN + 1];
  if (fd < 0)
    return csr_error_errno (err, "layer: open '%s'", path);
  if (csr_sha256_fd (fd, hex, err) < 0)
    return -1;
  c->m->bytes += (uint64_t)st->st_size;
  return csr_manifest_add (c->m, 'f', mode, (uint64_t)st->st_size, hex, path, err) < 0 ? -1 : 0;
}

static int
seal_dir (void *vctx, int dfd, const char *name, const char *path, const struct stat *st,
          csr_error **err)
{
  (void)vctx;
  (void)st;
  if (fchmodat (dfd, name, 0555, 0) < 0)
    return csr_error_errno (err, "layer: chmod '%s'", path);
  return 0;
}

int
csr_layer_seal (int layer_fd, struct csr_manifest *m, csr_error **err)
{
  if (csr_manifest_add (m, 'd', 0555, 0, NULL, ".", err) < 0)
    return -1;
  struct seal_ctx c = { .m = m };
  /* The top stays writable until it is renamed into place (moving a
   * directory to another parent writes its ".."): the caller makes it 0555. */
  return walk (layer_fd, "", seal_one, seal_dir, &c, err);
}

/* ---------------------------------------------------------------- the check before use */

struct check_ctx
{
  char *why;
};

static int
check_one (void *vctx, int dfd, const char *name, const char *path, const struct stat *st,
           csr_error **err)
{
  (void)dfd;
  (void)name;
  struct check_ctx *c = vctx;
  const char *what = NULL;
  if (st->st_uid != geteuid ())
    what = "is not owned by the effective uid";
  else if (!S_ISLNK (st->st_mode) && (st->st_mode & 022))
    what = "is writable by group or others";
  else if (!S_ISDIR (st->st_mode) && !S_ISREG (st->st_mode) && !S_ISLNK (st->st_mode))
    what = "is a special file";
  else if (!S_ISLNK (st->st_mode) && (st->st_mode & 06000))
    what = "is setuid or setgid";
  if (what == NULL)
    return 0;
  if (asprintf (&c->why, "%s %s", path, what) < 0)
    return csr_error_errno (err, "layer check");
  return -2;
}

int
csr_layer_check (int layer_fd, const struct csr_manifest *m, char **why, csr_error **err)
{
  *why = NULL;
  struct stat st;
  if (fstat (layer_fd, &st) < 0)
    return csr_error_errno (err, "layer check");
  struct check_ctx c = { .why = NULL };
  csr_error *e = NULL;
  if (csr_trust_check_entry (&st, false, "the layer", &e) < 0)
    {
      int r = asprintf (why, "%s", csr_error_text (e));
      csr_error_free (e);
      return r < 0 ? csr_error_errno (err, "layer check") : 1;
    }
  int r = walk (layer_fd, "", check_one, NULL, &c, &e);
  if (c.why)
    {
      csr_error_free (e);
      *why = c.why;
      return 1;
    }
  if (r < 0)
    {
      *err = e;
      return -1;
    }
  struct csr_tree_damage d;
  memset (&d, 0, sizeof d);
  if (csr_manifest_check (layer_fd, m, false, &d, err) < 0)
    return -1;
  int ret = 0;
  if (d.n > 0)
    {
      if (asprintf (why, "%zu entries differ from its manifest (first: %s)", d.n,
                    d.n_shown ? d.shown[0] : "?")
          < 0)
        ret = csr_error_errno (err, "layer check");
      else
        ret = 1;
    }
  csr_tree_damage_release (&d);
  return ret;
}
