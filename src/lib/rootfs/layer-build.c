/* csrun — package layers: one build, in a temporary directory of the
 * layer cache: resolve, download, extract each package, drop what the base
 * has, merge the rest, add the alternatives' links, seal (see layer.h). */
#include "config.h"
#include "layer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "rootfs.h"

int csr_layer_build (int base_fd, const char *base_dir, const char *tmp, struct csr_layer *l,
                     struct csr_manifest *m, char **known, csr_error **err);

/* ---------------------------------------------------------------- alternatives */

struct alt
{
  char *group; /* the master's name */
  char *link, *path;
  long prio;
};

struct alts
{
  struct alt *v;
  size_t n, cap;
};

static void
alts_release (struct alts *a)
{
  for (size_t i = 0; i < a->n; i++)
    {
      free (a->v[i].group);
      free (a->v[i].link);
      free (a->v[i].path);
    }
  free (a->v);
}

static bool
literal (const char *s)
{
  return s && s[0] == '/' && strpbrk (s, "$`\"'\\;|&<>(){}*?") == NULL;
}

static int
alts_add (struct alts *a, const char *group, const char *link, const char *path, long prio)
{
  if (a->n == a->cap)
    {
      size_t nc = a->cap ? a->cap * 2 : 8;
      struct alt *nv = realloc (a->v, nc * sizeof *nv);
      if (nv == NULL)
        return -1;
      a->v = nv;
      a->cap = nc;
    }
  struct alt *x = &a->v[a->n];
  x->group = strdup (group);
  x->link = strdup (link);
  x->path = strdup (path);
  x->prio = prio;
  if (!x->group || !x->link || !x->path)
    {
      free (x->group);
      free (x->link);
      free (x->path);
      return -1;
    }
  a->n++;
  return 0;
}

/* The `update-alternatives --install LINK NAME PATH PRIO [--slave LINK
 * NAME PATH]...` commands of a postinst whose arguments are literal paths
 * (anything with a shell expansion is ignored). */
static int
parse_postinst (char *text, struct alts *a)
{
  /* Continuation lines joined. */
  for (char *p = text; (p = strstr (p, "\\\n")) != NULL;)
    p[0] = p[1] = ' ';
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *tok[64];
      size_t nt = 0;
      char *s2 = NULL;
      for (char *t = strtok_r (line, " \t", &s2); t && nt < 64; t = strtok_r (NULL, " \t", &s2))
        tok[nt++] = t;
      for (size_t i = 0; i < nt; i++)
        {
          if (strcmp (tok[i], "update-alternatives") != 0)
            continue;
          size_t j = i + 1;
          while (j < nt && tok[j][0] == '-' && strcmp (tok[j], "--install") != 0)
            j++;
          if (j >= nt || strcmp (tok[j], "--install") != 0 || j + 4 >= nt)
            break;
          const char *link = tok[j + 1], *name = tok[j + 2], *path = tok[j + 3];
          char *end = NULL;
          long prio = strtol (tok[j + 4], &end, 10);
          if (!literal (link) || !literal (path) || end == tok[j + 4] || *end)
            break;
          if (alts_add (a, name, link, path, prio) < 0)
            return -1;
          for (j += 5; j + 3 < nt && strcmp (tok[j], "--slave") == 0; j += 4)
            if (literal (tok[j + 1]) && literal (tok[j + 3])
                && alts_add (a, name, tok[j + 1], tok[j + 3], prio) < 0)
              return -1;
          break;
        }
    }
  return 0;
}

static int
read_postinst (const char *control, struct alts *a, csr_error **err)
{
  cleanup_free char *path = NULL, *text = NULL;
  size_t len;
  if (asprintf (&path, "%s/postinst", control) < 0)
    return csr_error_errno (err, "layer");
  csr_error *e = NULL;
  if (csr_read_file (path, 1 << 20, &text, &len, &e) < 0)
    {
      csr_error_free (e);
      return 0; /* none (or not readable): nothing to reproduce */
    }
  if (parse_postinst (text, a) < 0)
    return csr_error_errno (err, "layer: postinst");
  return 0;
}

/* Auto mode: the highest priority of each group wins (the first on a tie). */
static int
apply_alts (int base_fd, int layer_fd, const struct alts *a, csr_error **err)
{
  for (size_t i = 0; i < a->n; i++)
    {
      bool best = true;
      for (size_t j = 0; j < a->n && best; j++)
        if (strcmp (a->v[j].group, a->v[i].group) == 0
            && (a->v[j].prio > a->v[i].prio
                || (a->v[j].prio == a->v[i].prio && j < i
                    && strcmp (a->v[j].link, a->v[i].link) == 0)))
          best = false;
      if (best
          && csr_layer_add_alternative (base_fd, layer_fd, a->v[i].link, a->v[i].path, err) < 0)
        return -1;
    }
  return 0;
}

/* ---------------------------------------------------------------- the build */

static int
mkdir_in (const char *tmp, const char *name, char **out, csr_error **err)
{
  if (asprintf (out, "%s/%s", tmp, name) < 0)
    {
      *out = NULL;
      return csr_error_errno (err, "layer");
    }
  if (mkdir (*out, 0755) < 0)
    return csr_error_errno (err, "mkdir '%s'", *out);
  return 0;
}

/* The dpkg status apt resolves against: the base's own (a debootstrap
 * rootfs), else an empty one written into TMP.  *HAS_STATUS says which. */
static int
base_status (int base_fd, const char *base_dir, const char *tmp, char **path, bool *has_status,
             csr_error **err)
{
  struct stat st;
  *has_status = fstatat (base_fd, "var/lib/dpkg/status", &st, AT_SYMLINK_NOFOLLOW) == 0
                && S_ISREG (st.st_mode) && st.st_size > 0;
  if (*has_status)
    return asprintf (path, "%s/var/lib/dpkg/status", base_dir) < 0
               ? (*path = NULL, csr_error_errno (err, "layer"))
               : 0;
  if (asprintf (path, "%s/status", tmp) < 0)
    {
      *path = NULL;
      return csr_error_errno (err, "layer");
    }
  return csr_write_file_atomic (*path, "", 0, 0644, err);
}

/* Extract package P (the .deb in DEBS), drop it when the base has it (no
 * dpkg status to say so), else merge it into LAYER_FD. */
static int
add_one (int base_fd, int layer_fd, const char *debs, const char *x, size_t i, bool has_status,
         struct csr_layer_pkg *p, struct alts *alts, csr_error **err)
{
  cleanup_free char *deb = csr_layer_deb_path (debs, p);
  cleanup_free char *scratch = NULL, *control = NULL;
  if (deb == NULL || asprintf (&scratch, "%s/%zu", x, i) < 0
      || asprintf (&control, "%s/%zu.control", x, i) < 0)
    return csr_error_errno (err, "layer");
  if (access (deb, F_OK) < 0)
    return csr_error_set (err, 0, "apt-get download made no file for %s=%s (%s)", p->name,
                          p->version, deb);
  if (mkdir (scratch, 0755) < 0 || mkdir (control, 0755) < 0)
    return csr_error_errno (err, "mkdir '%s'", scratch);
  if (csr_layer_extract (deb, scratch, control, err) < 0)
    return -1;
  if (unlink (deb) < 0)
    csr_debug ("layer: remove '%s': %s", deb, strerror (errno));
  cleanup_close int sfd = open (scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (sfd < 0)
    return csr_error_errno (err, "open '%s'", scratch);
  if (!has_status && csr_layer_in_base (base_fd, sfd, &p->in_base, err) < 0)
    return csr_error_wrap (err, "package %s", p->name);
  if (p->in_base)
    csr_debug ("layer: %s %s: the base has it", p->name, p->version);
  else
    {
      if (csr_layer_merge (base_fd, sfd, layer_fd, err) < 0)
        return csr_error_wrap (err, "package %s", p->name);
      if (read_postinst (control, alts, err) < 0)
        return -1;
    }
  if (csr_rm_rf (scratch, err) < 0 || csr_rm_rf (control, err) < 0)
    return -1;
  return 0;
}

/* ---------------------------------------------------------------- what the base has, memoised */

/* KNOWN is the text of LAYERS/base-<sha256>.known: "NAME VERSION ARCH in"
 * (or "out") lines, the verdicts of earlier builds over the same base, so
 * that a package the base has is not downloaded again just to see that. */
static bool
known_in (const char *known, const struct csr_layer_pkg *p)
{
  if (known == NULL)
    return false;
  char line[1024];
  snprintf (line, sizeof line, "\n%s %s %s in\n", p->name, p->version, p->arch);
  return strstr (known, line) != NULL;
}

/* KNOWN with the verdicts of L's packages added (those not in it yet). */
static int
known_update (char **known, const struct csr_layer *l, csr_error **err)
{
  for (size_t i = 0; i < l->n_pkgs; i++)
    {
      const struct csr_layer_pkg *p = &l->pkgs[i];
      char line[1024];
      snprintf (line, sizeof line, "\n%s %s %s ", p->name, p->version, p->arch);
      if (*known && strstr (*known, line))
        continue;
      char *n = NULL;
      if (asprintf (&n, "%s%s %s %s %s\n", *known ? *known : "\n", p->name, p->version, p->arch,
                    p->in_base ? "in" : "out")
          < 0)
        return csr_error_errno (err, "layer");
      free (*known);
      *known = n;
    }
  return 0;
}

int
csr_layer_build (int base_fd, const char *base_dir, const char *tmp, struct csr_layer *l,
                 struct csr_manifest *m, char **known, csr_error **err)
{
  cleanup_free char *tree = NULL, *debs = NULL, *x = NULL, *cache = NULL, *status = NULL;
  if (mkdir_in (tmp, "tree", &tree, err) < 0 || mkdir_in (tmp, "debs", &debs, err) < 0
      || mkdir_in (tmp, "x", &x, err) < 0 || mkdir_in (tmp, "apt-cache", &cache, err) < 0)
    return -1;
  bool has_status;
  if (base_status (base_fd, base_dir, tmp, &status, &has_status, err) < 0)
    return -1;
  int r = csr_layer_apt_resolve (tmp, status, l->asked, l->n_asked, &l->pkgs, &l->n_pkgs, err);
  if (r < 0)
    return r;
  size_t fetch = 0;
  for (size_t i = 0; i < l->n_pkgs; i++)
    {
      l->pkgs[i].in_base = !has_status && known_in (*known, &l->pkgs[i]);
      fetch += !l->pkgs[i].in_base;
    }
  csr_debug ("layer %.16s: %zu packages, %zu to fetch", l->key, l->n_pkgs, fetch);
  r = csr_layer_apt_download (tmp, debs, l->pkgs, l->n_pkgs, err);
  if (r < 0)
    {
      /* Name what was asked for, not only the dependency that failed first. */
      char asked[512] = "";
      for (size_t i = 0; i < l->n_asked; i++)
        snprintf (asked + strlen (asked), sizeof asked - strlen (asked), "%s%s", i ? " " : "",
                  l->asked[i]);
      csr_error_wrap (err, "%s", asked);
      return r;
    }
  cleanup_close int layer_fd = open (tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (layer_fd < 0)
    return csr_error_errno (err, "open '%s'", tree);
  struct alts alts = { 0 };
  int ret = -1;
  for (size_t i = 0; i < l->n_pkgs; i++)
    if (!l->pkgs[i].in_base
        && add_one (base_fd, layer_fd, debs, x, i, has_status, &l->pkgs[i], &alts, err) < 0)
      goto out;
  if (!has_status && known_update (known, l, err) < 0)
    goto out;
  if (apply_alts (base_fd, layer_fd, &alts, err) < 0 || csr_layer_seal (layer_fd, m, err) < 0)
    goto out;
  ret = 0;
out:
  alts_release (&alts);
  return ret;
}
