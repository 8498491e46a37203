/* csrun cache verify: check the unpacked rootfs trees against their
 * manifests, and with --repair unpack the damaged ones again.
 * csrun cache ls / prune: list and remove what the cache holds (the trees,
 * package layers, compiled gates and seccomp programs:
 * rootfs/cache-entries.c, rootfs/cache-layers.c). */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_gen.h>

#include "cmd.h"
#include "rootfs/rootfs.h"
#include "util/cleanup.h"
#include "util/digest.h"
#include "util/parse.h"
#include "util/trust.h"

struct cache_opts
{
  const char *action;
  const char *cache_dir;
  const char *rootfs;
  bool repair;
  bool json;
  bool quick;
  double older_than_s; /* prune --older-than; 0: not given */
};

enum
{
  OPT_CACHE_DIR = 1000,
  OPT_ROOTFS,
  OPT_REPAIR,
  OPT_JSON,
  OPT_QUICK,
  OPT_OLDER_THAN,
};

static struct argp_option cache_options[] = {
  { "repair", OPT_REPAIR, NULL, 0,
    "Unpack damaged trees again from their tarball (a tree whose tarball is gone is removed)", 0 },
  { "cache-dir", OPT_CACHE_DIR, "DIR", 0, "The rootfs cache (default: as csrun run)", 0 },
  { "rootfs", OPT_ROOTFS, "TARBALL", 0, "Only the tree of this tarball", 0 },
  { "quick", OPT_QUICK, NULL, 0, "Compare types, modes and sizes only, not the contents", 0 },
  { "json", OPT_JSON, NULL, 0, "One JSON document on stdout", 0 },
  { "older-than", OPT_OLDER_THAN, "DURATION", 0,
    "prune: only entries not used for DURATION (e.g. 7d, 12h, 30m; d = days)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

/* "7d", "2w" (days, weeks) or a csr_parse_duration ("12h", "30m", "90s"). */
static int
parse_age (const char *s, double *out)
{
  size_t n = strlen (s);
  double unit = 0;
  if (n > 1 && s[n - 1] == 'd')
    unit = 86400;
  else if (n > 1 && s[n - 1] == 'w')
    unit = 7 * 86400;
  csr_error *e = NULL;
  if (unit == 0)
    {
      int r = csr_parse_duration (s, 100.0 * 365 * 86400, out, &e);
      csr_error_free (e);
      return r;
    }
  cleanup_free char *num = strndup (s, n - 1);
  if (num == NULL || strpbrk (num, "hmsd") != NULL
      || csr_parse_duration (num, 100.0 * 365, out, &e) < 0)
    {
      csr_error_free (e);
      return -1;
    }
  *out *= unit;
  return 0;
}

static error_t
parse_cache (int key, char *arg, struct argp_state *state)
{
  struct cache_opts *o = state->input;
  switch (key)
    {
    case OPT_CACHE_DIR:
      o->cache_dir = arg;
      break;
    case OPT_ROOTFS:
      o->rootfs = arg;
      break;
    case OPT_REPAIR:
      o->repair = true;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case OPT_QUICK:
      o->quick = true;
      break;
    case OPT_OLDER_THAN:
      if (parse_age (arg, &o->older_than_s) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "invalid --older-than: '%s' (a duration: 7d, 12h, 30m, 90s)", arg);
      break;
    case ARGP_KEY_ARG:
      if (o->action != NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "unexpected argument '%s'", arg);
      if (strcmp (arg, "verify") != 0 && strcmp (arg, "ls") != 0 && strcmp (arg, "prune") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "unknown action '%s' (verify, ls or prune)", arg);
      o->action = arg;
      break;
    case ARGP_KEY_END:
      if (o->action == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing ACTION (verify, ls or prune)");
      if (o->older_than_s > 0 && strcmp (o->action, "prune") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--older-than goes with prune");
      if ((o->repair || o->quick || o->rootfs) && strcmp (o->action, "verify") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--repair, --quick and --rootfs go with verify");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static const char cache_doc[]
    = "verify: check the rootfs trees unpacked in the cache against the manifests recorded "
      "when they were unpacked.  ls: list what the cache holds (unpacked rootfs trees, "
      "package layers, compiled gates and seccomp programs) with size and last use.  prune: "
      "remove those entries (with --older-than, only those not used for that long); a tree or "
      "layer a running csrun uses is kept.\v"
      "Each tree gets one line: ok, or damaged with the number of entries that differ and the "
      "first few.  With --repair a damaged tree is unpacked again from the tarball its manifest "
      "names (when that file still has the tree's digest), else removed so that the next run "
      "unpacks afresh.  Exit status: 0 every tree is intact, 1 damage was found (repaired or "
      "not), 2 usage error, 125 csrun failed.  ls and prune exit 0, 2 or 125.  See csrun-cache(1).";

/* One tree's outcome. */
struct verdict
{
  const char *hex;
  struct csr_tree_damage d;
  const char *action; /* NULL, "repaired", "removed", "not-repaired" */
  char *source;       /* the tarball used (or that was missing) */
  char *error;        /* why the repair failed */
};

static void
print_text (const char *cache_dir, const struct verdict *v)
{
  if (v->d.n == 0)
    {
      printf ("%s/%s: ok\n", cache_dir, v->hex);
      return;
    }
  printf ("%s/%s: damaged: %zu %s:", cache_dir, v->hex, v->d.n, v->d.n == 1 ? "entry" : "entries");
  for (size_t i = 0; i < v->d.n_shown; i++)
    printf ("%s %s", i ? ";" : "", v->d.shown[i]);
  if (v->d.n > v->d.n_shown)
    printf ("; ...");
  if (v->action && strcmp (v->action, "repaired") == 0)
    printf ("; repaired: unpacked again from %s", v->source);
  else if (v->action && strcmp (v->action, "removed") == 0)
    printf ("; removed: its tarball %s is gone or changed (the next run unpacks afresh)",
            v->source ? v->source : "(not recorded)");
  else if (v->action)
    printf ("; not repaired: %s", v->error ? v->error : "unknown error");
  putchar ('\n');
}

static void
gen_str (yajl_gen y, const char *s)
{
  if (s == NULL)
    yajl_gen_null (y);
  else
    yajl_gen_string (y, (const unsigned char *)s, strlen (s));
}

static void
print_json (const char *cache_dir, const struct verdict *v, size_t n)
{
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return;
  yajl_gen_map_open (y);
  gen_str (y, "cache_dir");
  gen_str (y, cache_dir);
  gen_str (y, "trees");
  yajl_gen_array_open (y);
  for (size_t i = 0; i < n; i++)
    {
      yajl_gen_map_open (y);
      gen_str (y, "sha256");
      gen_str (y, v[i].hex);
      gen_str (y, "status");
      gen_str (y, v[i].d.n == 0 ? "ok" : "damaged");
      gen_str (y, "damaged");
      yajl_gen_integer (y, (long long)v[i].d.n);
      gen_str (y, "first");
      yajl_gen_array_open (y);
      for (size_t k = 0; k < v[i].d.n_shown; k++)
        gen_str (y, v[i].d.shown[k]);
      yajl_gen_array_close (y);
      gen_str (y, "repair");
      gen_str (y, v[i].action);
      gen_str (y, "source");
      gen_str (y, v[i].source);
      if (v[i].error)
        {
          gen_str (y, "error");
          gen_str (y, v[i].error);
        }
      yajl_gen_map_close (y);
    }
  yajl_gen_array_close (y);
  yajl_gen_map_close (y);
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
    printf ("%.*s\n", (int)len, (const char *)buf);
  yajl_gen_free (y);
}

static void
repair_one (const struct cache_opts *o, const char *cache_dir, struct verdict *v)
{
  enum csr_repair_outcome out;
  csr_error *e = NULL;
  if (csr_rootfs_cache_repair (cache_dir, v->hex, o->rootfs, true, 0, &out, &v->source, &e) < 0)
    {
      v->action = "not-repaired";
      v->error = strdup (csr_error_text (e));
      csr_error_free (e);
      return;
    }
  v->action = out == CSR_REPAIR_REMOVED ? "removed" : "repaired";
}

/* The digest of the tarball PATH (the name of its tree). */
static int
tarball_digest (const char *path, char hex[CSR_SHA256_HEX_LEN + 1], csr_error **err)
{
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return csr_error_errno (err, "rootfs '%s'", path);
  if (csr_sha256_fd (fd, hex, err) < 0)
    return csr_error_wrap (err, "rootfs '%s'", path);
  return 0;
}

/* The trees to check: all those of the cache, or the one of --rootfs
 * (*N is then 0 when it is not unpacked). */
static int
select_trees (const struct cache_opts *o, const char *cache_dir, char ***hexes, size_t *n,
              csr_error **err)
{
  char one[CSR_SHA256_HEX_LEN + 1];
  if (o->rootfs && tarball_digest (o->rootfs, one, err) < 0)
    return -1;
  if (csr_rootfs_cache_trees (cache_dir, hexes, n, err) < 0)
    return -1;
  if (o->rootfs == NULL)
    return 0;
  size_t k = 0;
  for (size_t i = 0; i < *n; i++)
    if (strcmp ((*hexes)[i], one) == 0)
      (*hexes)[k++] = (*hexes)[i];
    else
      free ((*hexes)[i]);
  *n = k;
  return 0;
}

/* --cache-dir, else the default one (allocated into *DEFAULT_DIR). */
static int
cache_dir_of (const struct cache_opts *o, char **default_dir, const char **cache_dir, csr_error **e)
{
  *cache_dir = o->cache_dir;
  if (*cache_dir == NULL)
    {
      if (csr_rootfs_cache_dir (default_dir, e) < 0)
        return -1;
      *cache_dir = *default_dir;
    }
  return 0;
}

static int
verify (const struct cache_opts *o)
{
  csr_error *e = NULL;
  cleanup_free char *default_dir = NULL;
  const char *cache_dir;
  if (cache_dir_of (o, &default_dir, &cache_dir, &e) < 0)
    goto fail;
  /* The same trust rule as every run (csrun-run(1), "Cache trust"): a
   * verdict on, or a repair of, a cache that is not ours means nothing. */
  {
    int cfd = csr_trust_open_dir ("cache directory", cache_dir, 0, NULL, &e);
    if (cfd < 0 && (cfd == CSR_TRUST_REFUSED || e == NULL || e->status != ENOENT))
      goto fail;
    if (cfd >= 0)
      close (cfd);
    csr_error_freep (&e); /* missing: no trees, said below */
  }
  char **hexes = NULL;
  size_t n = 0;
  if (select_trees (o, cache_dir, &hexes, &n, &e) < 0)
    goto fail;
  if (o->rootfs && n == 0)
    {
      free (hexes);
      fprintf (stderr, "csrun cache: the tree of '%s' is not in '%s' (not unpacked yet)\n",
               o->rootfs, cache_dir);
      return CSR_EXIT_FAILED;
    }

  struct verdict *v = calloc (n ? n : 1, sizeof *v);
  if (v == NULL)
    {
      csr_error_set (&e, ENOMEM, "cannot allocate");
      goto fail;
    }
  int rc = CSR_EXIT_OK;
  for (size_t i = 0; i < n; i++)
    {
      v[i].hex = hexes[i];
      if (csr_rootfs_cache_verify (cache_dir, hexes[i], !o->quick, &v[i].d, &e) < 0)
        {
          rc = CSR_EXIT_INTERNAL;
          break;
        }
      if (v[i].d.n > 0)
        {
          rc = CSR_EXIT_FAILED;
          if (o->repair)
            repair_one (o, cache_dir, &v[i]);
          if (v[i].error)
            fprintf (stderr, "csrun cache: %s/%s: %s\n", cache_dir, hexes[i], v[i].error);
        }
      if (!o->json)
        print_text (cache_dir, &v[i]);
    }
  if (rc == CSR_EXIT_INTERNAL)
    fprintf (stderr, "csrun cache: %s\n", csr_error_text (e));
  else if (o->json)
    print_json (cache_dir, v, n);
  else if (n == 0)
    printf ("%s: no unpacked rootfs trees\n", cache_dir);
  for (size_t i = 0; i < n; i++)
    {
      csr_tree_damage_release (&v[i].d);
      free (v[i].source);
      free (v[i].error);
      free (hexes[i]);
    }
  free (v);
  free (hexes);
  csr_error_free (e);
  return rc;
fail:
  fprintf (stderr, "csrun cache: %s\n", e ? csr_error_text (e) : "cannot allocate");
  csr_error_free (e);
  return CSR_EXIT_INTERNAL;
}

/* ------------------------------------------------------------ ls and prune */

/* 1.5K, 214M, 3.2G: a size for people. */
static void
human_size (uint64_t b, char *buf, size_t size)
{
  const char *units = "BKMGT";
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 4)
    {
      v /= 1024;
      u++;
    }
  if (u == 0)
    snprintf (buf, size, "%lluB", (unsigned long long)b);
  else
    snprintf (buf, size, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

static void
utc_time (int64_t t, char *buf, size_t size)
{
  time_t tt = (time_t)t;
  struct tm tm;
  if (gmtime_r (&tt, &tm) == NULL || strftime (buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf (buf, size, "?");
}

/* A layer's packages, from its .json: "asked" (names), "packages"
 * ({name, version}), "base_sha256". */
static void
layer_json (yajl_gen y, const struct csr_cache_entry *e)
{
  gen_str (y, "asked");
  yajl_gen_array_open (y);
  for (char **p = e->asked; p && *p; p++)
    gen_str (y, *p);
  yajl_gen_array_close (y);
  gen_str (y, "packages");
  yajl_gen_array_open (y);
  for (size_t k = 0; k < e->n_pkgs; k++)
    {
      yajl_gen_map_open (y);
      gen_str (y, "name");
      gen_str (y, e->pkgs[k].name);
      gen_str (y, "version");
      gen_str (y, e->pkgs[k].version);
      yajl_gen_map_close (y);
    }
  yajl_gen_array_close (y);
  gen_str (y, "base_sha256");
  if (e->base_sha256)
    gen_str (y, e->base_sha256);
  else
    yajl_gen_null (y);
}

/* A layer's packages for a person: "  [python3-numpy; 4 packages]". */
static void
layer_text (const struct csr_cache_entry *e)
{
  if (e->kind != CSR_CACHE_LAYER || e->asked == NULL)
    return;
  fputs ("  [", stdout);
  for (char **p = e->asked; *p; p++)
    printf ("%s%s", p == e->asked ? "" : " ", *p);
  printf ("; %zu package%s]", e->n_pkgs, e->n_pkgs == 1 ? "" : "s");
}

static void
entries_json (const char *cache_dir, const struct csr_cache_entry *v, size_t n, bool prune)
{
  yajl_gen y = yajl_gen_alloc (NULL);
  if (y == NULL)
    return;
  uint64_t total = 0;
  yajl_gen_map_open (y);
  gen_str (y, "cache_dir");
  gen_str (y, cache_dir);
  gen_str (y, "entries");
  yajl_gen_array_open (y);
  for (size_t i = 0; i < n; i++)
    {
      char when[32];
      utc_time (v[i].last_use, when, sizeof when);
      yajl_gen_map_open (y);
      gen_str (y, "kind");
      gen_str (y, csr_cache_kind_name (v[i].kind));
      gen_str (y, "name");
      gen_str (y, v[i].name);
      gen_str (y, "path");
      gen_str (y, v[i].path);
      gen_str (y, "bytes");
      yajl_gen_integer (y, (long long)v[i].bytes);
      gen_str (y, "last_use");
      gen_str (y, when);
      gen_str (y, "last_use_epoch");
      yajl_gen_integer (y, (long long)v[i].last_use);
      if ((v[i].kind == CSR_CACHE_ROOTFS || v[i].kind == CSR_CACHE_LAYER) && !prune)
        {
          gen_str (y, "in_use");
          yajl_gen_bool (y, v[i].in_use);
        }
      if (v[i].kind == CSR_CACHE_LAYER)
        layer_json (y, &v[i]);
      if (prune)
        {
          gen_str (y, "removed");
          yajl_gen_bool (y, v[i].removed);
          if (v[i].skipped)
            {
              gen_str (y, "kept");
              gen_str (y, v[i].skipped);
            }
        }
      yajl_gen_map_close (y);
      if (!prune || v[i].removed)
        total += v[i].bytes;
    }
  yajl_gen_array_close (y);
  gen_str (y, prune ? "freed_bytes" : "total_bytes");
  yajl_gen_integer (y, (long long)total);
  yajl_gen_map_close (y);
  const unsigned char *buf;
  size_t len;
  if (yajl_gen_get_buf (y, &buf, &len) == yajl_gen_status_ok)
    printf ("%.*s\n", (int)len, (const char *)buf);
  yajl_gen_free (y);
}

static void
entries_text (const char *cache_dir, const struct csr_cache_entry *v, size_t n, bool prune)
{
  uint64_t total = 0;
  size_t removed = 0;
  for (size_t i = 0; i < n; i++)
    {
      char size[16], when[32];
      human_size (v[i].bytes, size, sizeof size);
      utc_time (v[i].last_use, when, sizeof when);
      if (prune && v[i].removed)
        printf ("removed %-7s %6s  %s\n", csr_cache_kind_name (v[i].kind), size, v[i].path);
      else if (prune)
        printf ("kept    %-7s %6s  %s: %s\n", csr_cache_kind_name (v[i].kind), size, v[i].path,
                v[i].skipped ? v[i].skipped : "?");
      else
        {
          printf ("%-7s %6s  %s  %s", csr_cache_kind_name (v[i].kind), size, when, v[i].path);
          layer_text (&v[i]);
          printf ("%s\n", v[i].in_use ? "  (in use)" : "");
        }
      if (!prune || v[i].removed)
        {
          total += v[i].bytes;
          removed++;
        }
    }
  char size[16];
  human_size (total, size, sizeof size);
  if (prune)
    printf ("%s: removed %zu of %zu %s, freed %s\n", cache_dir, removed, n,
            n == 1 ? "entry" : "entries", size);
  else if (n == 0)
    printf ("%s: empty\n", cache_dir);
  else
    printf ("%s: %zu %s, %s\n", cache_dir, n, n == 1 ? "entry" : "entries", size);
}

static int
cache_entries (const struct cache_opts *o)
{
  csr_error *e = NULL;
  cleanup_free char *default_dir = NULL;
  const char *cache_dir;
  if (cache_dir_of (o, &default_dir, &cache_dir, &e) < 0)
    goto fail;
  bool prune = strcmp (o->action, "prune") == 0;
  struct csr_cache_entry *v = NULL;
  size_t n = 0;
  int rc = prune ? csr_cache_prune (cache_dir, o->older_than_s > 0 ? (int64_t)o->older_than_s : -1,
                                    &v, &n, &e)
                 : csr_cache_list (cache_dir, &v, &n, &e);
  if (rc < 0)
    goto fail;
  if (o->json)
    entries_json (cache_dir, v, n, prune);
  else
    entries_text (cache_dir, v, n, prune);
  csr_cache_entries_release (v, n);
  if (fflush (stdout) != 0 || ferror (stdout))
    {
      fprintf (stderr, "csrun cache: write to stdout: %s\n", strerror (errno));
      return CSR_EXIT_INTERNAL;
    }
  return CSR_EXIT_OK;
fail:
  fprintf (stderr, "csrun cache: %s\n", e ? csr_error_text (e) : "cannot allocate");
  csr_error_free (e);
  return CSR_EXIT_INTERNAL;
}

int
cmd_cache (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct cache_opts o;
  memset (&o, 0, sizeof o);
  struct argp argp = { cache_options, parse_cache, "verify|ls|prune", cache_doc, NULL, NULL, NULL };
  argp_err_exit_status = CSR_EXIT_USAGE;
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  if (strcmp (o.action, "verify") != 0)
    return cache_entries (&o);
  return verify (&o);
}
