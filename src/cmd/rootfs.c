/* csrun rootfs add PKG...: build (or find) the cached layer of Debian
 * packages over a rootfs, the one `csrun run --with PKG` mounts. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "rootfs/layer.h"
#include "rootfs/rootfs.h"
#include "util/cleanup.h"
#include "util/datadir.h"
#include "util/json-gen.h"
#include "util/trust.h"

#define MAX_PKGS CSR_LAYER_MAX_PACKAGES

struct rootfs_opts
{
  const char *action;
  const char *cache_dir;
  const char *rootfs;
  bool json;
  const char *pkgs[MAX_PKGS];
  size_t n_pkgs;
};

enum
{
  OPT_CACHE_DIR = 1000,
  OPT_ROOTFS,
  OPT_JSON,
};

static struct argp_option rootfs_options[] = {
  { "rootfs", OPT_ROOTFS, "TARBALL", 0, "The base rootfs (default: as csrun run)", 0 },
  { "cache-dir", OPT_CACHE_DIR, "DIR", 0, "The cache (default: as csrun run; must be yours)", 0 },
  { "json", OPT_JSON, NULL, 0, "One JSON document on stdout", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_rootfs (int key, char *arg, struct argp_state *state)
{
  struct rootfs_opts *o = state->input;
  switch (key)
    {
    case OPT_CACHE_DIR:
      o->cache_dir = arg;
      break;
    case OPT_ROOTFS:
      o->rootfs = arg;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case ARGP_KEY_ARG:
      if (o->action == NULL)
        {
          if (strcmp (arg, "add") != 0)
            argp_failure (state, CSR_EXIT_USAGE, 0, "unknown action '%s' (only: add)", arg);
          o->action = arg;
        }
      else if (o->n_pkgs >= MAX_PKGS)
        argp_failure (state, CSR_EXIT_USAGE, 0, "at most %d packages", MAX_PKGS);
      else
        o->pkgs[o->n_pkgs++] = arg;
      break;
    case ARGP_KEY_END:
      if (o->action == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "missing ACTION (add)");
      if (o->n_pkgs == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "add: missing PKG (a Debian package name)");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static const char rootfs_doc[]
    = "Add Debian packages to the Python rootfs as a cached, read-only layer, without root.\v"
      "add PKG... resolves the packages' dependencies with apt (no recommends), downloads them "
      "as the invoking user into the cache (the host's package lists must exist: apt-get update), "
      "drops what the base rootfs already has, extracts the rest without running maintainer "
      "scripts (no setuid bits, no device nodes, every file yours) and records the packages, "
      "their versions and the layer's digest.  The layer is keyed by the rootfs's digest and the "
      "sorted package names: adding the same set again is a cache hit.  `csrun run --with PKG` "
      "runs on the rootfs plus that layer (building it first if needed).  Exit status: 0 the "
      "layer is ready, 2 usage error or a package apt can't resolve or download (no network, "
      "unknown name), 125 csrun failed.  See csrun-rootfs(1).";

static void
print_json (const struct csr_layer *l)
{
  struct csr_jgen w;
  csr_error *e = NULL;
  if (csr_jgen_init (&w, false, &e) < 0)
    {
      fprintf (stderr, "csrun rootfs: %s\n", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "key", l->key);
  csr_jgen_kv_str (&w, "digest", l->digest);
  csr_jgen_kv_str (&w, "dir", l->dir);
  csr_jgen_kv_str (&w, "base_sha256", l->base_sha256);
  csr_jgen_str (&w, "built");
  csr_jgen_bool (&w, l->built_now);
  if (l->rebuilt_why)
    csr_jgen_kv_str (&w, "rebuilt_why", l->rebuilt_why);
  csr_layer_jgen_contents (&w, l);
  csr_jgen_map_close (&w);
  size_t len = 0;
  cleanup_free char *doc = csr_jgen_finish (&w, "the result", &len, &e);
  if (doc == NULL)
    {
      fprintf (stderr, "csrun rootfs: %s\n", csr_error_text (e));
      csr_error_free (e);
      return;
    }
  printf ("%s\n", doc);
}

static void
print_text (const struct csr_layer *l)
{
  size_t in = 0, n = 0;
  for (size_t i = 0; i < l->n_pkgs; i++)
    l->pkgs[i].in_base ? in++ : n++;
  if (l->rebuilt_why)
    fprintf (stderr, "csrun rootfs: the cached layer %.16s was not used (%s): rebuilt it\n", l->key,
             l->rebuilt_why);
  printf ("%s: layer %.16s (%s): %zu %s, %zu already in the rootfs; %zu files, %.1f MiB; digest "
          "%s\n",
          l->dir, l->key, l->built_now ? "built" : "cached", n, n == 1 ? "package" : "packages", in,
          l->files, (double)l->bytes / (1024.0 * 1024.0), l->digest);
  for (size_t i = 0; i < l->n_pkgs; i++)
    if (!l->pkgs[i].in_base)
      printf ("  %s %s\n", l->pkgs[i].name, l->pkgs[i].version);
}

static int
add (const struct rootfs_opts *o)
{
  csr_error *e = NULL;
  cleanup_free char *default_dir = NULL;
  cleanup_free char *src = o->rootfs ? strdup (o->rootfs) : csr_find_rootfs ();
  const char *cache_dir = o->cache_dir;
  struct csr_rootfs *r = NULL;
  struct csr_layer *l = NULL;
  int rc = CSR_EXIT_INTERNAL;
  if (src == NULL)
    {
      csr_error_set (&e, ENOMEM, "find the rootfs");
      goto out;
    }
  if (cache_dir == NULL)
    {
      if (csr_rootfs_cache_dir (&default_dir, &e) < 0)
        goto out;
      cache_dir = default_dir;
    }
  if (csr_rootfs_resolve (src, cache_dir, &r, &e) < 0)
    goto out;
  {
    /* The canonical path: the layer is found below it by the jail's overlay. */
    cleanup_free char *canon = NULL;
    int fd = csr_trust_open_dir ("cache directory", cache_dir, 0700, &canon, &e);
    if (fd < 0)
      goto out;
    close (fd);
    int lr = csr_layer_ensure (r->dir, r->sha256, canon, o->pkgs, o->n_pkgs, &l, &e);
    if (lr == CSR_LAYER_BAD_PACKAGE || (lr < 0 && r->sha256 == NULL))
      {
        rc = CSR_EXIT_USAGE;
        goto out;
      }
    if (lr < 0)
      goto out;
  }
  if (o->json)
    print_json (l);
  else
    print_text (l);
  rc = CSR_EXIT_OK;
out:
  if (e)
    fprintf (stderr, "csrun rootfs: %s\n", csr_error_text (e));
  csr_error_free (e);
  csr_layer_free (l);
  csr_rootfs_free (r);
  return rc;
}

int
cmd_rootfs (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct rootfs_opts o;
  memset (&o, 0, sizeof o);
  struct argp argp = { rootfs_options, parse_rootfs, "add PKG...", rootfs_doc, NULL, NULL, NULL };
  argp_err_exit_status = CSR_EXIT_USAGE;
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  return add (&o);
}
