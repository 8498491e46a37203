/* csrun update: change a container's linux.resources (runc's flags, or
 * -r with a JSON document). */
#include "config.h"
#include "oci.h"
#include "oci-cmds.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jail/procns.h"
#include "cgroup/cgroup.h"
#include "oci/devices.h"
#include "oci/hooks.h"
#include "oci/notify.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/parse.h"
#include "util/syscalls.h"

/* runc's update flags: NAME, what it sets. */
enum upd_kind
{
  UPD_BYTES,  /* a size ("50M", "1g", bytes) or -1 (unlimited) */
  UPD_INT,    /* an integer, -1 allowed */
  UPD_UINT,   /* an unsigned integer */
  UPD_STRING, /* as is */
};
struct upd_flag
{
  const char *name;
  enum upd_kind kind;
  size_t off;  /* in struct csr_cgroup_resources */
  size_t has;  /* its has_* flag, or (size_t)-1 */
  unsigned wd; /* bytes of the field: 8, 2 (blkio weight) */
};
#define UPD_NONE ((size_t)-1)
#define UPD_AT(f) offsetof (struct csr_cgroup_resources, f)
static const struct upd_flag upd_flags[] = {
  { "memory", UPD_BYTES, UPD_AT (memory_limit), UPD_NONE, 8 },
  { "memory-swap", UPD_BYTES, UPD_AT (memory_swap), UPD_NONE, 8 },
  { "memory-reservation", UPD_BYTES, UPD_AT (memory_reservation), UPD_AT (has_memory_reservation),
    8 },
  { "kernel-memory", UPD_BYTES, UPD_AT (memory_kernel), UPD_AT (has_memory_kernel), 8 },
  { "kernel-memory-tcp", UPD_BYTES, UPD_AT (memory_kernel_tcp), UPD_AT (has_memory_kernel_tcp), 8 },
  { "pids-limit", UPD_INT, UPD_AT (pids_limit), UPD_NONE, 8 },
  { "cpu-period", UPD_UINT, UPD_AT (cpu_period), UPD_NONE, 8 },
  { "cpu-quota", UPD_INT, UPD_AT (cpu_quota), UPD_NONE, 8 },
  { "cpu-share", UPD_UINT, UPD_AT (cpu_shares), UPD_NONE, 8 },
  { "cpu-shares", UPD_UINT, UPD_AT (cpu_shares), UPD_NONE, 8 },
  { "cpu-rt-period", UPD_UINT, UPD_AT (cpu_rt_period), UPD_AT (has_cpu_rt_period), 8 },
  { "cpu-rt-runtime", UPD_INT, UPD_AT (cpu_rt_runtime), UPD_AT (has_cpu_rt_runtime), 8 },
  { "cpuset-cpus", UPD_STRING, UPD_AT (cpu_cpus), UPD_NONE, 0 },
  { "cpuset-mems", UPD_STRING, UPD_AT (cpu_mems), UPD_NONE, 0 },
  { "blkio-weight", UPD_UINT, UPD_AT (blkio_weight), UPD_AT (has_blkio_weight), 2 },
};

static const char update_usage[]
    = "Usage: csrun update [OPTION...] ID\n"
      "Set new cgroup limits on a running (or paused) container; only what is given is written\n"
      "(a --cpu-quota alone keeps the period, and the reverse).\n"
      "  -r, --resources FILE|-     linux.resources JSON (runtime spec syntax) from FILE or stdin\n"
      "      --memory BYTES         memory limit (50M, 1G, bytes; -1: unlimited)\n"
      "      --memory-swap BYTES    memory+swap limit (-1: unlimited)\n"
      "      --memory-reservation BYTES  soft limit (v1 soft_limit_in_bytes, v2 memory.low)\n"
      "      --kernel-memory BYTES, --kernel-memory-tcp BYTES  (ignored where the kernel has "
      "none)\n"
      "      --pids-limit N         maximum number of processes (-1: unlimited)\n"
      "      --cpu-period US, --cpu-quota US (-1: unlimited), --cpu-share N\n"
      "      --cpu-rt-period US, --cpu-rt-runtime US  realtime group scheduling (cgroup v1)\n"
      "      --cpuset-cpus LIST, --cpuset-mems LIST   e.g. 0-2,4\n"
      "      --blkio-weight N       10..1000\n"
      "Options take their value as the next word or after '='.  See csrun-oci(8).";

/* Set one runc-style flag of R from VAL. */
static int
update_flag (const struct csr_global *g, const struct upd_flag *f, const char *val,
             struct csr_cgroup_resources *r)
{
  char *base = (char *)r;
  if (f->kind == UPD_STRING)
    {
      char **sp = (char **)(base + f->off);
      free (*sp);
      *sp = strdup (val);
      if (*sp == NULL)
        return oci_failf (g, "out of memory");
      return 0;
    }
  int64_t v = 0;
  if (f->kind == UPD_BYTES && strcmp (val, "-1") != 0)
    {
      uint64_t b;
      csr_error *e = NULL;
      if (csr_parse_size (val, INT64_MAX, &b, &e) < 0)
        {
          csr_error_free (e);
          return oci_failf (g, "update: invalid --%s '%s' (a size such as 64M, or -1)", f->name,
                            val);
        }
      v = (int64_t)b;
    }
  else
    {
      char *end;
      errno = 0;
      long long n = strtoll (val, &end, 10);
      if (errno || *end || end == val || n < (f->kind == UPD_UINT ? 0 : -1))
        return oci_failf (g, "update: invalid --%s '%s'", f->name, val);
      v = n;
    }
  if (f->wd == 2)
    {
      if (v != 0 && (v < 10 || v > 1000))
        return oci_failf (g, "update: --%s must be 10..1000, got '%s'", f->name, val);
      *(uint16_t *)(base + f->off) = (uint16_t)v;
    }
  else
    *(int64_t *)(base + f->off) = v; /* the uint64_t fields share the layout */
  if (f->has != UPD_NONE)
    *(bool *)(base + f->has) = v != 0 || f->wd != 2;
  return 0;
}

/* linux.resources JSON from PATH ("-": stdin, any kind of file) into *R,
 * with the device rules (root only: rootless there is no device cgroup). */
static int
update_json (const struct csr_global *g, const char *path, struct csr_cgroup_resources *r,
             struct oci_dev_rule **dev)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  int rc;
  if (strcmp (path, "-") == 0)
    rc = csr_read_fd (STDIN_FILENO, 1 << 20, &text, &len, &e);
  else
    {
      /* A pipe or /dev/fd/N is fine too: read it blocking. */
      cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0)
        return oci_failf (g, "update: %s: %s", path, strerror (errno));
      rc = csr_read_fd (fd, 1 << 20, &text, &len, &e);
    }
  if (rc < 0)
    return oci_fail (g, e);
  if (oci_cgroup_resources_parse (text, len, r, &e) < 0)
    return oci_fail (g, e);
  /* The device rules: through the config parser, which has their syntax. */
  cleanup_free char *doc = NULL;
  if (asprintf (&doc,
                "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"linux\":{"
                "\"resources\":%.*s}}",
                (int)len, text)
      < 0)
    return oci_failf (g, "out of memory");
  struct oci_config cfg;
  memset (&cfg, 0, sizeof cfg);
  if (oci_config_parse (doc, strlen (doc), &cfg, &e) < 0)
    return oci_fail (g, e);
  rc = 0;
  if (cfg.resources.has_devices)
    {
      /* Root: set them (or fail); rootless: there is no device cgroup, as
       * create said. */
      if (oci_devices_privileged ())
        {
          size_t n = cfg.resources.n_devices;
          if (n && (*dev = calloc (n, sizeof **dev)) == NULL)
            rc = oci_failf (g, "out of memory");
          else
            {
              if (n)
                memcpy (*dev, cfg.resources.devices, n * sizeof **dev);
              r->set_devices = true;
              r->devices = *dev;
              r->n_devices = n;
            }
        }
      else if (cfg.resources.n_devices)
        oci_warn (g, "linux.resources.devices not enforced (rootless: no device cgroup)");
    }
  oci_config_release (&cfg);
  return rc;
}

static void
release_resources (struct csr_cgroup_resources *r)
{
  oci_cgroup_resources_release (r);
}
#define cleanup_resources __attribute__ ((cleanup (release_resources)))

/* csrun update [-r FILE|-] [runc's flags] ID: new limits for a running
 * container's cgroup (linux.resources syntax for -r). */
int
cmd_oci_update (struct csr_global *g, int argc, char **argv)
{
  const char *resources = NULL, *id = NULL;
  cleanup_resources struct csr_cgroup_resources r = { 0 };
  cleanup_free struct oci_dev_rule *dev = NULL;
  /* Flags apply after -r's JSON: collect them first. */
  const struct upd_flag *fl[64];
  const char *fv[64];
  size_t nf = 0;
  for (int i = 1; i < argc; i++)
    {
      const char *w = argv[i];
      if (strcmp (w, "--help") == 0 || strcmp (w, "-h") == 0)
        {
          puts (update_usage);
          return 0;
        }
      if (w[0] != '-' || strcmp (w, "-") == 0)
        {
          if (id)
            return oci_failf (g, "update: unexpected argument '%s'", w);
          id = w;
          continue;
        }
      const char *name = w + (w[1] == '-' ? 2 : 1);
      const char *eq = strchr (name, '=');
      size_t nl = eq ? (size_t)(eq - name) : strlen (name);
      const char *val = eq ? eq + 1 : NULL;
      if ((nl == 1 && name[0] == 'r') || (nl == 9 && strncmp (name, "resources", 9) == 0))
        {
          if (val == NULL && i + 1 >= argc)
            return oci_failf (g, "update: %s needs a value", w);
          resources = val ? val : argv[++i];
          continue;
        }
      if ((nl == 15 && strncmp (name, "l3-cache-schema", 15) == 0)
          || (nl == 13 && strncmp (name, "mem-bw-schema", 13) == 0))
        return oci_failf (g, "update: --%.*s: Intel RDT (linux.intelRdt) is not supported by csrun",
                          (int)nl, name);
      const struct upd_flag *f = NULL;
      for (size_t k = 0; k < sizeof upd_flags / sizeof upd_flags[0]; k++)
        if (strlen (upd_flags[k].name) == nl && strncmp (upd_flags[k].name, name, nl) == 0)
          f = &upd_flags[k];
      if (f == NULL || w[1] != '-')
        return oci_failf (g, "update: unknown option '%s'", w);
      if (val == NULL)
        {
          if (i + 1 >= argc)
            return oci_failf (g, "update: %s needs a value", w);
          val = argv[++i];
        }
      if (nf == sizeof fl / sizeof fl[0])
        return oci_failf (g, "update: too many options");
      fl[nf] = f;
      fv[nf++] = val;
    }
  if (id == NULL)
    return oci_failf (g, "update: missing container ID");
  if (resources && update_json (g, resources, &r, &dev))
    return 1;
  for (size_t k = 0; k < nf; k++)
    if (update_flag (g, fl[k], fv[k], &r))
      return 1;
  csr_error *e = NULL;
  cleanup_free char *root = oci_root (g);
  if (root == NULL)
    return 1;
  struct oci_state st;
  if (load (g, root, id, &st))
    return 1;
  cleanup_cgroup struct csr_cgroup *cg = state_cgroup (&st);
  int rc = 0;
  if (oci_state_status (&st) == OCI_STOPPED)
    rc = oci_failf (g, "cannot update container '%s': it is stopped", id);
  else if (cg == NULL)
    rc = oci_failf (g, "cannot update container '%s': it has no cgroup", id);
  else
    {
      struct csr_cgroup_applied ap = { 0 };
      if (csr_cgroup_update (cg, &r, &ap, &e) < 0)
        rc = oci_fail (g, e);
      else if (r.set_devices && !ap.devices)
        rc = oci_failf (g,
                        "cannot update container '%s': linux.resources.devices: no devices "
                        "controller in its cgroup",
                        id);
    }
  oci_state_release (&st);
  return rc;
}
