/* csrun sandbox create|ls|inspect|stop|start|rm|gc (exec: sandbox-exec.c):
 * options -> a request to src/lib/sandbox -> output and exit code. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>

#include "cmd.h"
#include "sandbox.h"
#include "rootfs/layer.h"
#include "sandbox/ports.h"
#include "sandbox/sandbox.h"
#include "supervisor/snippet.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/termsafe.h"
#include "util/trust.h"

void
sbx_parse_env (struct argp_state *state, char *arg, const char **env, size_t *n_env)
{
  csr_error *e = NULL;
  size_t kl;
  bool has;
  if (csr_parse_env (arg, &kl, &has, &e) < 0 || !has)
    argp_failure (state, CSR_EXIT_USAGE, 0, "--env expects KEY=VALUE: '%s'", arg);
  if (*n_env == CSR_SANDBOX_MAX_ENV)
    argp_failure (state, CSR_EXIT_USAGE, 0, "too many --env");
  env[(*n_env)++] = arg;
}

void
sbx_arg_extra (struct argp_state *state, const char *arg)
{
  argp_failure (state, CSR_EXIT_USAGE, 0, "unexpected argument '%s'", arg);
}

void
sbx_arg_id (struct argp_state *state, char *arg, const char **id, bool takes_id)
{
  if (!takes_id || *id)
    sbx_arg_extra (state, arg);
  *id = arg;
}

void
sbx_need_id (struct argp_state *state, const char *id)
{
  if (id == NULL)
    argp_failure (state, CSR_EXIT_USAGE, 0, "missing the sandbox's ID (or name)");
}

void
sbx_check_name (struct argp_state *state, const char *name)
{
  if (!csr_sandbox_name_ok (name))
    argp_failure (state, CSR_EXIT_USAGE, 0,
                  "invalid --name '%s' (1 to 64 letters, digits, '_', '.', '-')", name);
}

int
sbx_print_done (const char *id, bool json)
{
  if (json)
    printf ("{\"id\":\"%s\",\"ok\":true}\n", id);
  else
    printf ("%s\n", id);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

int
sbx_fail (const char *cmd, csr_error *e, int code)
{
  fprintf (stderr, "csrun sandbox %s: %s\n", cmd, e ? csr_error_text (e) : "out of memory");
  csr_error_free (e);
  return code;
}

int
sbx_root (const char *cmd, int *code)
{
  csr_error *e = NULL;
  cleanup_free char *path = NULL;
  int fd = csr_sandbox_root (&path, &e);
  if (fd < 0)
    {
      *code = sbx_fail (cmd, e, CSR_EXIT_INTERNAL);
      return -1;
    }
  if (csr_sandbox_collect (fd, NULL, NULL, &e) < 0)
    {
      fprintf (stderr, "csrun sandbox %s: warning: %s\n", cmd, csr_error_text (e));
      csr_error_freep (&e);
    }
  sbx_ckpt_collect (cmd, NULL, NULL);
  return fd;
}

int
sbx_open (const char *cmd, int rootfd, const char *id_or_name, char *id, int *code)
{
  csr_error *e = NULL;
  if (csr_sandbox_find (rootfd, id_or_name, id, &e) < 0)
    {
      *code = sbx_fail (cmd, e, e && e->status == ENOENT ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL);
      return -1;
    }
  int fd = openat (rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      csr_error_errno (&e, "open sandbox %s", id);
      *code = sbx_fail (cmd, e, CSR_EXIT_INTERNAL);
    }
  return fd;
}

int
sbx_enter (const char *cmd, const char *id_or_name, char *id, int *code)
{
  cleanup_close int root = sbx_root (cmd, code);
  if (root < 0)
    return -1;
  return sbx_open (cmd, root, id_or_name, id, code);
}

/* ------------------------------------------------------------ create */

struct create_opts
{
  struct csr_sandbox_spec spec;
  const char *env[CSR_SANDBOX_MAX_ENV];
  size_t n_env;
  const char *with[CSR_LAYER_MAX_PACKAGES];
  size_t n_with;
  bool allow_host_net, json;
  const char *net;
  bool allow_all_interfaces;
};

enum
{
  OPT_NAME = 1000,
  OPT_ROOTFS,
  OPT_MEMORY,
  OPT_CPU,
  OPT_CPUS,
  OPT_PIDS,
  OPT_ENV,
  OPT_WORKDIR,
  OPT_IDLE,
  OPT_TTL,
  OPT_NET,
  OPT_ALLOW_HOST_NET,
  OPT_JSON,
  OPT_FORCE,
  OPT_PUBLISH,
  OPT_UPSTREAM,
  OPT_ALLOW_ALL_IF,
  OPT_IDLE_ACTION,
  OPT_WITH,
  OPT_DISK,
};

static struct argp_option create_options[] = {
  { "name", OPT_NAME, "NAME", 0, "A unique name for the sandbox (usable instead of its id)", 0 },
  { "rootfs", OPT_ROOTFS, "PATH", 0, "The rootfs: a tarball or a directory (default: as csrun run)",
    0 },
  { "memory", OPT_MEMORY, "SIZE", 0, "Memory limit (default 2G; 0: none)", 0 },
  { "cpu", OPT_CPU, "MILLIS", 0, "CPU limit in thousandths of a CPU, e.g. 1000m (default 1000m)",
    0 },
  { "cpus", OPT_CPUS, "N", 0, "CPU limit in CPUs (--cpus 2 is --cpu 2000m)", 0 },
  { "pids", OPT_PIDS, "N", 0, "At most N processes (default 256; 0: none)", 0 },
  { "env", OPT_ENV, "KEY=VALUE", 0, "Add to the sandbox's environment (repeatable)", 0 },
  { "workdir", OPT_WORKDIR, "DIR", 0, "The working directory of execs (default /work)", 0 },
  { "idle-timeout", OPT_IDLE, "DURATION", 0,
    "Remove the sandbox after this long without activity (default 300s; 0: never)", 0 },
  { "ttl", OPT_TTL, "DURATION", 0, "Remove the sandbox this long after its creation (0: never)",
    0 },
  { "idle-action", OPT_IDLE_ACTION, "remove|checkpoint", 0,
    "What the idle timeout does: remove (default), or checkpoint then remove", 0 },
  { "net", OPT_NET, "none|host", 0,
    "none (default): an empty network namespace with lo up; host needs --allow-host-net", 0 },
  { "allow-host-net", OPT_ALLOW_HOST_NET, NULL, 0, "Confirm --net host (no network isolation)", 0 },
  { "publish", OPT_PUBLISH, "[HOSTIP:]HOSTPORT:PORT", 0,
    "Forward the host's HOSTIP:HOSTPORT (default 127.0.0.1; HOSTPORT 0: a free port) to the "
    "sandbox's 127.0.0.1:PORT (repeatable)",
    0 },
  { "upstream", OPT_UPSTREAM, "PORT:HOST:HOSTPORT", 0,
    "Let the sandbox reach HOST:HOSTPORT, and nothing else, at its 127.0.0.1:PORT (repeatable)",
    0 },
  { "allow-all-interfaces", OPT_ALLOW_ALL_IF, NULL, 0,
    "Confirm a --publish on 0.0.0.0 or [::] (every interface: reachable from other machines)", 0 },
  { "with", OPT_WITH, "PKG", 0,
    "A read-only layer of this Debian package and its dependencies above the rootfs, as csrun "
    "run --with (repeatable)",
    0 },
  { "disk", OPT_DISK, "SIZE", 0,
    "Cap the writable layer at SIZE (a tmpfs of its own: memory, kept across stop and start)", 0 },
  { "json", OPT_JSON, NULL, 0, "Print {\"id\":..., \"name\":..., \"ports\":[...]} as JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_create (int key, char *arg, struct argp_state *state)
{
  struct create_opts *o = state->input;
  struct csr_sandbox_spec *s = &o->spec;
  csr_error *e = NULL;
  uint64_t v;
  double d;
  switch (key)
    {
    case OPT_NAME:
      sbx_check_name (state, arg);
      s->name = arg;
      break;
    case OPT_ROOTFS:
      s->rootfs = arg;
      break;
    case OPT_MEMORY:
      if (csr_parse_size (arg, UINT64_MAX, &s->memory, &e) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--memory: %s", csr_error_text (e));
      break;
    case OPT_CPU:
      {
        size_t n = strlen (arg);
        char *num = strndup (arg, n && arg[n - 1] == 'm' ? n - 1 : n);
        if (num == NULL || csr_parse_uint (num, 0, 1000000, &s->cpu_millis, &e) < 0)
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --cpu '%s' (e.g. 500m)", arg);
        free (num);
        break;
      }
    case OPT_CPUS:
      {
        char *end;
        double c = strtod (arg, &end);
        if (end == arg || *end || c < 0 || c > 1024)
          argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --cpus '%s'", arg);
        s->cpu_millis = (uint64_t)(c * 1000 + 0.5);
        break;
      }
    case OPT_PIDS:
      if (csr_parse_uint (arg, 0, 1 << 22, &v, &e) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--pids: %s", csr_error_text (e));
      if (v && v < 4)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--pids must be 0 or at least 4");
      s->pids = v;
      break;
    case OPT_ENV:
      sbx_parse_env (state, arg, o->env, &o->n_env);
      break;
    case OPT_WORKDIR:
      if (arg[0] != '/' || strstr (arg, "/..") || strstr (arg, "/./") || strlen (arg) > 1024
          || strcmp (arg, "/") == 0 || strcmp (arg, "/tmp") == 0 || strncmp (arg, "/proc", 5) == 0
          || strncmp (arg, "/dev", 4) == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "invalid --workdir '%s' (an absolute directory, not /, /tmp, /proc, /dev)",
                      arg);
      s->workdir = arg;
      break;
    case OPT_IDLE:
    case OPT_TTL:
      if (strcmp (arg, "0") == 0)
        d = 0;
      else if (csr_parse_duration (arg, 366.0 * 86400, &d, &e) < 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "%s: %s",
                      key == OPT_IDLE ? "--idle-timeout" : "--ttl", csr_error_text (e));
      if (key == OPT_IDLE)
        s->idle_timeout_s = d;
      else
        s->ttl_s = d;
      break;
    case OPT_IDLE_ACTION:
      if (strcmp (arg, "remove") != 0 && strcmp (arg, "checkpoint") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--idle-action is remove or checkpoint");
      s->idle_checkpoint = strcmp (arg, "checkpoint") == 0;
      break;
    case OPT_NET:
      if (strcmp (arg, "none") != 0 && strcmp (arg, "host") != 0)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--net is none or host");
      o->net = arg;
      break;
    case OPT_ALLOW_HOST_NET:
      o->allow_host_net = true;
      break;
    case OPT_PUBLISH:
    case OPT_UPSTREAM:
      sbx_parse_port (state, arg, key == OPT_UPSTREAM, s);
      break;
    case OPT_ALLOW_ALL_IF:
      o->allow_all_interfaces = true;
      break;
    case OPT_JSON:
      o->json = true;
      break;
    case OPT_WITH:
      if (!csr_layer_valid_name (arg))
        argp_failure (state, CSR_EXIT_USAGE, 0, "--with: '%s' is not a Debian package name", arg);
      if (o->n_with == CSR_LAYER_MAX_PACKAGES)
        argp_failure (state, CSR_EXIT_USAGE, 0, "too many --with (at most %d)",
                      CSR_LAYER_MAX_PACKAGES);
      o->with[o->n_with++] = arg;
      break;
    case OPT_DISK:
      if (csr_parse_size (arg, 1ULL << 40, &s->disk, &e) < 0 || s->disk < (1ULL << 20))
        argp_failure (state, CSR_EXIT_USAGE, 0, "invalid --disk '%s' (1M to 1T)", arg);
      break;
    case ARGP_KEY_ARG:
      sbx_arg_extra (state, arg);
      break;
    case ARGP_KEY_END:
      if (o->net && strcmp (o->net, "host") == 0 && !o->allow_host_net)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--net host shares the host's network (no isolation): add "
                      "--allow-host-net to confirm");
      s->host_net = o->net && strcmp (o->net, "host") == 0;
      sbx_check_ports (state, s, o->allow_all_interfaces);
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  csr_error_free (e);
  return 0;
}

/* The environment: csrun run's defaults, then --env (a later KEY wins). */
static int
build_env (struct create_opts *o)
{
  size_t nd = 0;
  const char *const *def = csr_snippet_default_env (&nd);
  char **v = calloc (nd + o->n_env + 1, sizeof *v);
  if (v == NULL)
    return -1;
  size_t n = 0;
  for (size_t i = 0; i < nd + o->n_env; i++)
    {
      const char *kv = i < nd ? def[i] : o->env[i - nd];
      size_t kl = (size_t)(strchr (kv, '=') - kv) + 1, j;
      for (j = 0; j < n; j++)
        if (strncmp (v[j], kv, kl) == 0)
          break;
      char *c = strdup (kv);
      if (c == NULL)
        return -1;
      if (j < n)
        free (v[j]);
      v[j] = c;
      if (j == n)
        n++;
    }
  o->spec.env = v;
  return 0;
}

/* --with: the names as the spec's own (NULL-terminated) copy. */
static int
copy_with (struct create_opts *o)
{
  if (o->n_with == 0)
    return 0;
  char **v = calloc (o->n_with + 1, sizeof *v);
  if (v == NULL)
    return -1;
  o->spec.with = v;
  for (size_t i = 0; i < o->n_with; i++)
    if ((v[i] = strdup (o->with[i])) == NULL)
      return -1;
  return 0;
}

static int
cmd_create (int argc, char **argv)
{
  struct create_opts o;
  memset (&o, 0, sizeof o);
  o.spec.memory = 2ULL << 30;
  o.spec.cpu_millis = 1000;
  o.spec.pids = 256;
  o.spec.idle_timeout_s = 300;
  static const char doc[] = "Create a sandbox: a long-lived jail with a writable layer over the "
                            "read-only rootfs.  Prints its id.\vSee csrun-sandbox(1).";
  struct argp argp = { create_options, parse_create, NULL, doc, NULL, NULL, NULL };
  if (argp_parse (&argp, argc, argv, 0, NULL, &o) != 0)
    return CSR_EXIT_USAGE;
  int code;
  cleanup_close int root = sbx_root ("create", &code);
  if (root < 0)
    return code;
  /* The strings of the options are argv's: copies, as spec_release frees. */
  struct csr_sandbox_spec *s = &o.spec;
  s->name = s->name ? strdup (s->name) : NULL;
  if (s->rootfs)
    {
      const char *arg = s->rootfs;
      if ((s->rootfs = realpath (arg, NULL)) == NULL)
        {
          fprintf (stderr, "csrun sandbox create: --rootfs %s: %s\n", arg, strerror (errno));
          free (s->name);
          return CSR_EXIT_USAGE;
        }
    }
  s->workdir = strdup (s->workdir ? s->workdir : "/work");
  csr_error *e = NULL;
  if (build_env (&o) < 0 || s->workdir == NULL || copy_with (&o) < 0)
    return sbx_fail ("create", NULL, CSR_EXIT_INTERNAL);
  int rc = csr_sandbox_create (root, NULL, s, &e);
  if (rc < 0)
    {
      int st = e ? e->status : 0;
      csr_sandbox_spec_release (s);
      return sbx_fail ("create", e,
                       st == EEXIST || rc == CSR_LAYER_BAD_PACKAGE ? CSR_EXIT_USAGE
                                                                   : CSR_EXIT_INTERNAL);
    }
  /* Never a limit claimed that is not applied (inspect says how each is). */
  cleanup_close int d = openat (root, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct csr_sandbox_spec made;
  bool have_made = d >= 0 && csr_sandbox_spec_read (d, &made, NULL) == 0;
  if (have_made)
    {
      if ((made.cpu_millis && !made.cpu_enforced) || strstr (made.mechanism, "rlimit"))
        fprintf (stderr,
                 "csrun sandbox create: warning: limits %s%s (no writable cgroup here; see "
                 "csrun sandbox inspect)\n",
                 strstr (made.mechanism, "rlimit") ? "enforced by rlimits" : "incomplete",
                 made.cpu_millis && !made.cpu_enforced ? ", cpu not limited" : "");
    }
  if (o.json)
    {
      /* The ports as the keeper bound them (HOSTPORT 0). */
      struct csr_jgen w;
      char *out = NULL;
      if (csr_jgen_init (&w, false, NULL) == 0)
        {
          csr_jgen_map_open (&w);
          csr_jgen_kv_str (&w, "id", s->id);
          if (s->name)
            csr_jgen_kv_str (&w, "name", s->name);
          csr_sandbox_ports_gen (&w, have_made ? &made : s, true);
          csr_jgen_map_close (&w);
          out = csr_jgen_finish (&w, "the reply", NULL, NULL);
        }
      if (out)
        printf ("%s\n", out);
      else
        {
          /* Out of memory: the id at least (the sandbox exists). */
          fprintf (stderr, "csrun sandbox create: warning: out of memory for the JSON reply\n");
          printf ("{\"id\":\"%s\"}\n", s->id);
        }
      free (out);
    }
  else
    printf ("%s\n", s->id);
  if (have_made)
    csr_sandbox_spec_release (&made);
  csr_sandbox_spec_release (s);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

/* ------------------------------------------------------------ ls, inspect */

struct simple_opts
{
  const char *cmd;
  const char *id;
  bool json, force, need_id;
};

static struct argp_option simple_options[] = {
  { "json", OPT_JSON, NULL, 0, "Print JSON", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};
static struct argp_option rm_options[] = {
  { "json", OPT_JSON, NULL, 0, "Print JSON", 0 },
  { "force", OPT_FORCE, NULL, 0, "Remove a running sandbox too (its processes are killed)", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static error_t
parse_simple (int key, char *arg, struct argp_state *state)
{
  struct simple_opts *o = state->input;
  switch (key)
    {
    case OPT_JSON:
      o->json = true;
      break;
    case OPT_FORCE:
      o->force = true;
      break;
    case ARGP_KEY_ARG:
      sbx_arg_id (state, arg, &o->id, o->need_id);
      break;
    case ARGP_KEY_END:
      if (o->need_id)
        sbx_need_id (state, o->id);
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

/* The keeper's view: {"status", "init_pid", "pids", ...}, or NULL. */
static yajl_val
keeper_info (int dirfd)
{
  return csr_sandbox_call_json (dirfd, "{\"op\":\"info\"}", 5000, NULL);
}

static void
gen_limits (struct csr_jgen *w, const struct csr_sandbox_spec *s)
{
  csr_jgen_str (w, "limits");
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "mechanism", s->mechanism);
  csr_jgen_kv_int (w, "memory_bytes", (long long)s->memory);
  csr_jgen_str (w, "memory_enforced");
  csr_jgen_bool (w, s->memory_enforced);
  csr_jgen_kv_int (w, "pids", (long long)s->pids);
  csr_jgen_str (w, "pids_enforced");
  csr_jgen_bool (w, s->pids_enforced);
  csr_jgen_kv_int (w, "cpu_millis", (long long)s->cpu_millis);
  csr_jgen_str (w, "cpu_enforced");
  csr_jgen_bool (w, s->cpu_enforced);
  csr_jgen_kv_str (w, "seccomp", "default");
  csr_jgen_map_close (w);
}

void
sbx_fmt_time (int64_t t, char *buf, size_t n)
{
  time_t tt = (time_t)t;
  struct tm tm;
  /* A file's mtime can be anything (a tar's): out of range is "?". */
  if (gmtime_r (&tt, &tm) == NULL || strftime (buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
    snprintf (buf, n, "?");
}

/* One sandbox as a JSON object (ls --json, inspect). */
static void
gen_sandbox (struct csr_jgen *w, const struct csr_sandbox_spec *s, yajl_val info, bool full,
             const char *statedir, int dirfd)
{
  const char *status = csr_json_str (csr_json_get (info, "status"));
  char ct[32], ex[32];
  sbx_fmt_time (s->created, ct, sizeof ct);
  sbx_fmt_time (s->created + (int64_t)s->ttl_s, ex, sizeof ex);
  csr_jgen_map_open (w);
  csr_jgen_kv_str (w, "id", s->id);
  if (s->name)
    csr_jgen_kv_str (w, "name", s->name);
  csr_jgen_kv_str (w, "status", status ? status : "dead");
  csr_jgen_kv_str (w, "created", ct);
  csr_jgen_kv_int (w, "idle_timeout_s", (long long)s->idle_timeout_s);
  if (s->ttl_s > 0)
    csr_jgen_kv_str (w, "expires", ex);
  else
    {
      csr_jgen_str (w, "expires");
      yajl_gen_null (w->g);
    }
  if (full)
    {
      csr_jgen_kv_str (w, "state_dir", statedir);
      csr_jgen_kv_int (w, "keeper_pid", s->keeper_pid);
      csr_jgen_kv_int (w, "init_pid", csr_json_int (info, "init_pid", 0));
      csr_jgen_str (w, "pids");
      yajl_val pids = csr_json_get (info, "pids");
      if (pids)
        csr_jgen_tree (w, pids);
      else
        {
          csr_jgen_array_open (w);
          csr_jgen_array_close (w);
        }
      csr_jgen_kv_int (w, "idle_ms", csr_json_int (info, "idle_ms", 0));
      gen_limits (w, s);
      csr_sandbox_ports_gen (w, s, true);
      csr_jgen_str (w, "spec");
      csr_jgen_map_open (w);
      csr_jgen_kv_str (w, "rootfs", s->rootfs ? s->rootfs : "default");
      if (s->rootfs_dir)
        csr_jgen_kv_str (w, "rootfs_dir", s->rootfs_dir);
      csr_jgen_kv_str (w, "workdir", s->workdir);
      csr_jgen_kv_strv (w, "env", (const char *const *)s->env);
      csr_jgen_kv_str (w, "net", s->host_net ? "host" : "none");
      csr_jgen_kv_int (w, "ttl_s", (long long)s->ttl_s);
      sbx_gen_spec_layers (w, s);
      csr_jgen_map_close (w);
      csr_jgen_str (w, "cgroup");
      csr_jgen_map_open (w);
      if (s->cgroup_v2)
        csr_jgen_kv_str (w, "v2", s->cgroup_v2);
      csr_jgen_str (w, "v1");
      csr_jgen_array_open (w);
      for (size_t i = 0; i < s->n_cgroup_v1; i++)
        csr_jgen_str (w, s->cgroup_v1[i]);
      csr_jgen_array_close (w);
      csr_jgen_map_close (w);
      sbx_gen_live (w, dirfd, s);
    }
  csr_jgen_map_close (w);
}

static int
print_doc (struct csr_jgen *w, const char *cmd, const char *what, bool inert)
{
  csr_error *e = NULL;
  size_t len;
  char *doc = csr_jgen_finish (w, what, &len, &e);
  if (doc == NULL)
    return sbx_fail (cmd, e, CSR_EXIT_INTERNAL);
  char *safe = inert && isatty (STDOUT_FILENO) ? csr_termsafe_json (doc, len, &len) : NULL;
  int rc = fwrite (safe ? safe : doc, 1, len, stdout) == len && putchar ('\n') != EOF
                   && fflush (stdout) == 0
               ? 0
               : CSR_EXIT_INTERNAL;
  free (safe);
  free (doc);
  return rc;
}

int
sbx_print_doc (struct csr_jgen *w, const char *cmd)
{
  /* Names and paths from a sandbox: inert on a terminal. */
  return print_doc (w, cmd, "the output", true);
}

int
sbx_print_json (struct csr_jgen *w, const char *cmd, const char *what)
{
  return print_doc (w, cmd, what, false);
}

static int
cmd_ls (struct simple_opts *o)
{
  int code;
  cleanup_close int root = sbx_root ("ls", &code);
  if (root < 0)
    return code;
  char **ids;
  size_t n;
  csr_error *e = NULL;
  if (csr_sandbox_list (root, &ids, &n, &e) < 0)
    return sbx_fail ("ls", e, CSR_EXIT_INTERNAL);
  struct csr_jgen w;
  if (o->json && csr_jgen_init (&w, false, &e) < 0)
    return sbx_fail ("ls", e, CSR_EXIT_INTERNAL);
  if (o->json)
    csr_jgen_array_open (&w);
  else
    printf ("%-32s  %-16s  %-8s  %-20s  %-6s  %s\n", "ID", "NAME", "STATUS", "CREATED", "IDLE",
            "EXPIRES");
  for (size_t i = 0; i < n; i++)
    {
      cleanup_close int d = openat (root, ids[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct csr_sandbox_spec s;
      if (d < 0 || csr_sandbox_spec_read (d, &s, &e) < 0)
        {
          csr_error_freep (&e);
          continue;
        }
      yajl_val info = keeper_info (d);
      if (o->json)
        gen_sandbox (&w, &s, info, false, NULL, d);
      else
        {
          const char *st = csr_json_str (csr_json_get (info, "status"));
          char ct[32], ex[32] = "-", idle[16];
          sbx_fmt_time (s.created, ct, sizeof ct);
          if (s.ttl_s > 0)
            sbx_fmt_time (s.created + (int64_t)s.ttl_s, ex, sizeof ex);
          snprintf (idle, sizeof idle, "%llds", (long long)s.idle_timeout_s);
          printf ("%-32s  %-16s  %-8s  %-20s  %-6s  %s\n", s.id, s.name ? s.name : "-",
                  st ? st : "dead", ct, s.idle_timeout_s > 0 ? idle : "-", ex);
        }
      yajl_tree_free (info);
      csr_sandbox_spec_release (&s);
    }
  csr_sandbox_list_free (ids, n);
  if (o->json)
    {
      csr_jgen_array_close (&w);
      return sbx_print_doc (&w, "ls");
    }
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

int
sbx_list_sandboxes (bool json)
{
  struct simple_opts o = { .cmd = "ls", .json = json };
  return cmd_ls (&o);
}

static int
cmd_inspect (struct simple_opts *o)
{
  int code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_enter ("inspect", o->id, id, &code);
  if (d < 0)
    return code;
  struct csr_sandbox_spec s;
  csr_error *e = NULL;
  if (csr_sandbox_spec_read (d, &s, &e) < 0)
    return sbx_fail ("inspect", e, CSR_EXIT_INTERNAL);
  yajl_val info = keeper_info (d);
  cleanup_free char *rootpath = NULL;
  cleanup_free char *statedir = NULL;
  int rfd = csr_sandbox_root (&rootpath, NULL);
  if (rfd >= 0)
    close (rfd);
  if (asprintf (&statedir, "%s/%s", rootpath ? rootpath : "?", id) < 0)
    statedir = NULL;
  struct csr_jgen w;
  if (csr_jgen_init (&w, true, &e) < 0)
    return sbx_fail ("inspect", e, CSR_EXIT_INTERNAL);
  gen_sandbox (&w, &s, info, true, statedir, d);
  yajl_tree_free (info);
  csr_sandbox_spec_release (&s);
  return sbx_print_doc (&w, "inspect");
}

/* ------------------------------------------------------------ stop, start, rm, gc */

static int
simple_request (struct simple_opts *o, const char *op)
{
  int code;
  cleanup_close int root = sbx_root (o->cmd, &code);
  if (root < 0)
    return code;
  char id[CSR_SANDBOX_ID_LEN + 1];
  cleanup_close int d = sbx_open (o->cmd, root, o->id, id, &code);
  if (d < 0)
    return code;
  csr_error *e = NULL;
  if (strcmp (op, "rm") == 0 && !o->force)
    {
      yajl_val info = keeper_info (d);
      const char *st = csr_json_str (csr_json_get (info, "status"));
      bool running = st && strcmp (st, "running") == 0;
      yajl_tree_free (info);
      if (running)
        {
          csr_error_set (&e, 0, "sandbox %s is running: stop it first, or rm --force", id);
          return sbx_fail (o->cmd, e, SBX_EXIT_REFUSED);
        }
    }
  char req[64];
  snprintf (req, sizeof req, "{\"op\":\"%s\"}", op);
  char *reply = NULL;
  if (csr_sandbox_call (d, req, 30000, &reply, &e) < 0)
    {
      bool refused = e && e->status == 0;
      if (strcmp (op, "rm") != 0 || refused)
        return sbx_fail (o->cmd, e, refused ? SBX_EXIT_REFUSED : CSR_EXIT_INTERNAL);
      csr_error_freep (&e);
    }
  free (reply);
  if (strcmp (op, "rm") == 0)
    {
      /* The keeper removes everything before it exits; if it is gone
       * already (or dies), the state is collected here. */
      for (int i = 0; i < 200 && faccessat (root, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0; i++)
        {
          if (!csr_sandbox_keeper_alive (d))
            {
              if (csr_sandbox_reap (root, id, false, &e) < 0)
                return sbx_fail (o->cmd, e, CSR_EXIT_INTERNAL);
              break;
            }
          usleep (10000);
        }
    }
  return sbx_print_done (id, o->json);
}

static int
cmd_gc (struct simple_opts *o)
{
  csr_error *e = NULL;
  cleanup_free char *path = NULL;
  cleanup_close int root = csr_sandbox_root (&path, &e);
  if (root < 0)
    return sbx_fail ("gc", e, CSR_EXIT_INTERNAL);
  char **removed, **ckpts;
  size_t n, nc;
  int rc = csr_sandbox_collect (root, &removed, &n, &e);
  sbx_ckpt_collect ("gc", &ckpts, &nc);
  if (o->json)
    {
      printf ("{\"removed\":[");
      for (size_t i = 0; i < n; i++)
        printf ("%s\"%s\"", i ? "," : "", removed[i]);
      printf ("],\"checkpoints_removed\":[");
      for (size_t i = 0; i < nc; i++)
        printf ("%s\"%s\"", i ? "," : "", ckpts[i]);
      printf ("]}\n");
    }
  else
    {
      for (size_t i = 0; i < n; i++)
        printf ("%s\n", removed[i]);
      for (size_t i = 0; i < nc; i++)
        printf ("checkpoint %s\n", ckpts[i]);
    }
  csr_sandbox_list_free (removed, n);
  csr_sandbox_list_free (ckpts, nc);
  if (rc < 0)
    return sbx_fail ("gc", e, CSR_EXIT_INTERNAL);
  return fflush (stdout) == 0 ? 0 : CSR_EXIT_INTERNAL;
}

/* ------------------------------------------------------------ the table */

static const struct
{
  const char *name, *args, *doc;
} simple_cmds[] = {
  { "inspect", "ID",
    "Print a sandbox as JSON: its spec, processes, state directory, limits and "
    "how they are enforced." },
  { "stop", "ID", "Kill the sandbox's processes; its writable layer stays." },
  { "start", "ID", "Start a stopped sandbox again (a new init on the same layer)." },
  { "rm", "ID",
    "Remove a sandbox (a running one only with --force): processes, cgroup, layer, "
    "state directory." },
  { "gc", "",
    "Remove the sandboxes whose keeper is gone and the expired checkpoints (and print their "
    "ids)." },
};

/* The commands with options of their own (each parses its argv). */
static const struct
{
  const char *name;
  int (*fn) (int argc, char **argv);
} full_cmds[] = {
  { "create", cmd_create },
  { "exec", cmd_sandbox_exec },
  { "run", cmd_sandbox_run },         /* sandbox-run.c */
  { "session", cmd_sandbox_session }, /* sandbox-run.c */
  { "port", cmd_sandbox_port },
  /* ls without an ID lists the sandboxes (sbx_list_sandboxes). */
  { "ls", cmd_sandbox_ls },
  { "cp", cmd_sandbox_cp },
  { "read", cmd_sandbox_read },
  { "write", cmd_sandbox_write },
  { "find", cmd_sandbox_find },
  { "checkpoint", cmd_sandbox_checkpoint },
  { "restore", cmd_sandbox_restore },
  { "wait", cmd_sandbox_wait }, /* detached execs (sandbox-wait.c) */
};

static const char sandbox_usage[]
    = "usage: csrun sandbox COMMAND [OPTION...]\n"
      "Commands: create, exec, wait, run, session, port, ls, inspect, stop, start, rm, gc,\n"
      "checkpoint [ls|rm], restore; files: cp, read, write, ls ID, find (each with --help).\n"
      "See csrun-sandbox(1).\n";

int
cmd_sandbox (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  argp_err_exit_status = CSR_EXIT_USAGE;
  if (argc < 2)
    {
      fputs (sandbox_usage, stderr);
      return CSR_EXIT_USAGE;
    }
  const char *sub = argv[1];
  if (strcmp (sub, "--help") == 0 || strcmp (sub, "-h") == 0 || strcmp (sub, "help") == 0)
    {
      fputs (sandbox_usage, stdout);
      return 0;
    }
  char prog[64];
  snprintf (prog, sizeof prog, "csrun sandbox %s", sub);
  argv[1] = prog;
  for (size_t i = 0; i < sizeof full_cmds / sizeof full_cmds[0]; i++)
    if (strcmp (sub, full_cmds[i].name) == 0)
      return full_cmds[i].fn (argc - 1, argv + 1);
  for (size_t i = 0; i < sizeof simple_cmds / sizeof simple_cmds[0]; i++)
    if (strcmp (sub, simple_cmds[i].name) == 0)
      {
        struct simple_opts o = { .cmd = simple_cmds[i].name };
        o.need_id = simple_cmds[i].args[0] != '\0';
        char doc[300];
        snprintf (doc, sizeof doc, "%s\vSee csrun-sandbox(1).", simple_cmds[i].doc);
        struct argp argp = { strcmp (sub, "rm") == 0 ? rm_options : simple_options,
                             parse_simple,
                             simple_cmds[i].args,
                             doc,
                             NULL,
                             NULL,
                             NULL };
        if (argp_parse (&argp, argc - 1, argv + 1, 0, NULL, &o) != 0)
          return CSR_EXIT_USAGE;
        if (strcmp (sub, "inspect") == 0)
          return cmd_inspect (&o);
        if (strcmp (sub, "gc") == 0)
          return cmd_gc (&o);
        return simple_request (&o, sub);
      }
  fprintf (stderr, "csrun sandbox: unknown command '%s'\n%s", sub, sandbox_usage);
  return CSR_EXIT_USAGE;
}
