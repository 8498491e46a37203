/* csrun — config.json (OCI runtime spec 1.0-1.2) parsed strictly with yajl_tree.
 *
 * The document is checked in three passes: a byte scan (no NUL, no comments,
 * no "\u0000" escape, bounded nesting), yajl_tree_parse, a walk refusing
 * duplicate object keys anywhere; then the known fields are read into struct
 * oci_config, each checked against its spec type.  Errors name the JSON path
 * of the offending value ("process.user.uid: ...").
 *
 * The JSON machinery (pre-scan, duplicate keys, typed getters with a path)
 * is util/json.c's; the "linux" object is config-linux.c's; `csrun spec`'s
 * default document is spec-gen.c's. */

#include "config.h"
#include "oci-config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "config-internal.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

#define OCI_CONFIG_MAX_BYTES ((size_t)4 << 20)

/* ------------------------------------------------------------------ tables */

#define CAPNAME(n) [CAP_##n] = "CAP_" #n
static const char *const cap_names[] = {
  CAPNAME (CHOWN),
  CAPNAME (DAC_OVERRIDE),
  CAPNAME (DAC_READ_SEARCH),
  CAPNAME (FOWNER),
  CAPNAME (FSETID),
  CAPNAME (KILL),
  CAPNAME (SETGID),
  CAPNAME (SETUID),
  CAPNAME (SETPCAP),
  CAPNAME (LINUX_IMMUTABLE),
  CAPNAME (NET_BIND_SERVICE),
  CAPNAME (NET_BROADCAST),
  CAPNAME (NET_ADMIN),
  CAPNAME (NET_RAW),
  CAPNAME (IPC_LOCK),
  CAPNAME (IPC_OWNER),
  CAPNAME (SYS_MODULE),
  CAPNAME (SYS_RAWIO),
  CAPNAME (SYS_CHROOT),
  CAPNAME (SYS_PTRACE),
  CAPNAME (SYS_PACCT),
  CAPNAME (SYS_ADMIN),
  CAPNAME (SYS_BOOT),
  CAPNAME (SYS_NICE),
  CAPNAME (SYS_RESOURCE),
  CAPNAME (SYS_TIME),
  CAPNAME (SYS_TTY_CONFIG),
  CAPNAME (MKNOD),
  CAPNAME (LEASE),
  CAPNAME (AUDIT_WRITE),
  CAPNAME (AUDIT_CONTROL),
  CAPNAME (SETFCAP),
  CAPNAME (MAC_OVERRIDE),
  CAPNAME (MAC_ADMIN),
  CAPNAME (SYSLOG),
  CAPNAME (WAKE_ALARM),
  CAPNAME (BLOCK_SUSPEND),
  CAPNAME (AUDIT_READ),
  CAPNAME (PERFMON),
  CAPNAME (BPF),
  CAPNAME (CHECKPOINT_RESTORE),
};
#undef CAPNAME
_Static_assert(sizeof cap_names / sizeof cap_names[0] == CAP_CHECKPOINT_RESTORE + 1,
               "one name per capability up to CAP_CHECKPOINT_RESTORE");

static const struct name_value rlimit_names[] = {
  { "RLIMIT_AS", RLIMIT_AS },
  { "RLIMIT_CORE", RLIMIT_CORE },
  { "RLIMIT_CPU", RLIMIT_CPU },
  { "RLIMIT_DATA", RLIMIT_DATA },
  { "RLIMIT_FSIZE", RLIMIT_FSIZE },
  { "RLIMIT_LOCKS", RLIMIT_LOCKS },
  { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
  { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
  { "RLIMIT_NICE", RLIMIT_NICE },
  { "RLIMIT_NOFILE", RLIMIT_NOFILE },
  { "RLIMIT_NPROC", RLIMIT_NPROC },
  { "RLIMIT_RSS", RLIMIT_RSS },
  { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
  { "RLIMIT_RTTIME", RLIMIT_RTTIME },
  { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
  { "RLIMIT_STACK", RLIMIT_STACK },
};

static const char *const hook_names[OCI_HOOK_N] = {
  [OCI_HOOK_PRESTART] = "prestart",
  [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
  [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
  [OCI_HOOK_START_CONTAINER] = "startContainer",
  [OCI_HOOK_POSTSTART] = "poststart",
  [OCI_HOOK_POSTSTOP] = "poststop",
};

const char *
oci_hook_stage_name (int stage)
{
  if (stage < 0 || stage >= OCI_HOOK_N)
    return "unknown";
  return hook_names[stage];
}

void
oci_cfg_strv_free (char **v, size_t n)
{
  if (v == NULL)
    return;
  for (size_t i = 0; i < n; i++)
    free (v[i]);
  free (v);
}

/* Drop every KEY=... that a later entry with the same KEY overrides, keeping
 * the order of the rest: the last one wins, as runc's prepareEnv and crun do
 * (`exec --env PATH=...` after the spec's PATH).  V stays NULL-terminated. */
static void
env_dedup (char **v, size_t *n)
{
  size_t out = 0;
  for (size_t i = 0; i < *n; i++)
    {
      const char *eq = strchr (v[i], '=');
      size_t klen = eq ? (size_t)(eq - v[i]) : strlen (v[i]);
      bool later = false;
      for (size_t j = i + 1; j < *n && !later; j++)
        later = strncmp (v[j], v[i], klen) == 0 && (v[j][klen] == '=' || v[j][klen] == '\0');
      if (later)
        free (v[i]);
      else
        v[out++] = v[i];
    }
  for (size_t i = out; i < *n; i++)
    v[i] = NULL;
  *n = out;
}

/* An array of strings into a NULL-terminated vector (allocated even when
 * empty).  CHECK (may be NULL) validates each element. */

static int
value_strv (struct csr_jpath *x, yajl_val v, char ***out, size_t *n_out, str_check_fn check)
{
  if (csr_jpath_expect (x, v, yajl_t_array, "an array of strings") < 0)
    return -1;
  size_t n = v->u.array.len;
  char **vec = calloc (n + 1, sizeof *vec);
  if (vec == NULL)
    return csr_jpath_oom (x);
  oci_cfg_strv_free (*out, *n_out);
  *out = vec;
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      size_t s = csr_jpath_push_index (x, i);
      int r = csr_jpath_string (x, v->u.array.values[i], &vec[i]);
      if (r == 0 && check)
        r = check (x, vec[i]);
      csr_jpath_pop (x, s);
      if (r < 0)
        return -1;
    }
  return 0;
}

int
oci_cfg_get_strv (struct csr_jpath *x, yajl_val obj, const char *key, bool required, char ***out,
                  size_t *n_out, str_check_fn check)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = value_strv (x, v, out, n_out, check);
  csr_jpath_pop (x, s);
  return r;
}

/* An object whose values are all strings, as parallel key/value vectors. */
int
oci_cfg_get_string_map (struct csr_jpath *x, yajl_val obj, const char *key, char ***keys,
                        char ***values, size_t *n_out)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_get_typed (x, obj, key, false, yajl_t_object, "an object of strings", &v, &s);
  if (r <= 0)
    return r;
  size_t n = v->u.object.len;
  *keys = calloc (n + 1, sizeof **keys);
  *values = calloc (n + 1, sizeof **values);
  *n_out = n;
  if (*keys == NULL || *values == NULL)
    {
      csr_jpath_oom (x);
      csr_jpath_pop (x, s);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      const char *k = v->u.object.keys[i];
      if (*k == '\0')
        {
          csr_jpath_fail (x, "keys must not be empty");
          csr_jpath_pop (x, s);
          return -1;
        }
      size_t s2 = csr_jpath_push_key (x, k);
      r = csr_jpath_string (x, v->u.object.values[i], &(*values)[i]);
      if (r == 0 && ((*keys)[i] = strdup (k)) == NULL)
        r = csr_jpath_oom (x);
      csr_jpath_pop (x, s2);
      if (r < 0)
        {
          csr_jpath_pop (x, s);
          return -1;
        }
    }
  csr_jpath_pop (x, s);
  return 0;
}

/* KEY of OBJ, an optional array: *ARR, and an array of its length with
 * ELEM-byte elements in *OUT and *N (left alone when empty).  1 when present,
 * 0 when absent, -1 on an error. */
int
oci_cfg_get_array_alloc (struct csr_jpath *x, yajl_val obj, const char *key, size_t elem,
                         yajl_val *arr, size_t *saved, void **out, size_t *n)
{
  int r = csr_jpath_get_typed (x, obj, key, false, yajl_t_array, "an array", arr, saved);
  if (r <= 0)
    return r;
  size_t len = (*arr)->u.array.len;
  if (len)
    {
      *out = calloc (len, elem);
      if (*out == NULL)
        return csr_jpath_oom (x);
      *n = len;
    }
  return 1;
}

/* --------------------------------------------------------- string checks */

int
oci_cfg_check_absolute (struct csr_jpath *x, const char *s)
{
  if (s[0] != '/')
    return csr_jpath_fail (x, "expected an absolute path, got '%s'", s);
  return 0;
}

static int
check_env (struct csr_jpath *x, const char *s)
{
  const char *eq = strchr (s, '=');
  if (eq == NULL || eq == s)
    return csr_jpath_fail (x, "expected KEY=VALUE, got '%s'", s);
  return 0;
}

/* ------------------------------------------------------------ the config */

static int
parse_root (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  yajl_val root;
  size_t s;
  int r = csr_jpath_get_typed (x, doc, "root", true, yajl_t_object, "an object", &root, &s);
  if (r < 0)
    return -1;
  if (csr_jpath_get_string (x, root, "path", true, &c->root_path) < 0
      || csr_jpath_get_bool (x, root, "readonly", &c->root_readonly) < 0)
    return -1;
  if (c->root_path[0] == '\0')
    {
      csr_jpath_push_key (x, "path");
      return csr_jpath_fail (x, "must not be empty");
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_mounts (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, doc, "mounts", sizeof *c->mounts, &arr, &s,
                                   (void **)&c->mounts, &c->n_mounts);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_mount *m = &c->mounts[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      if (csr_jpath_get_string (x, o, "destination", true, &m->destination) < 0
          || csr_jpath_get_string (x, o, "type", false, &m->type) < 0
          || csr_jpath_get_string (x, o, "source", false, &m->source) < 0
          || oci_cfg_get_strv (x, o, "options", false, &m->options, &m->n_options, NULL) < 0)
        return -1;
      if (m->destination[0] == '\0')
        {
          csr_jpath_push_key (x, "destination");
          return csr_jpath_fail (x, "must not be empty");
        }
      /* runtime-spec 1.1: a relative destination is relative to "/" (deprecated). */
      if (m->destination[0] != '/')
        {
          char *abs = NULL;
          if (asprintf (&abs, "/%s", m->destination) < 0)
            return csr_jpath_oom (x);
          free (m->destination);
          m->destination = abs;
        }
      if (m->options == NULL && (m->options = calloc (1, sizeof *m->options)) == NULL)
        return csr_jpath_oom (x);
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_caps (struct csr_jpath *x, yajl_val proc, struct oci_config *c)
{
  yajl_val caps;
  size_t s;
  int r
      = csr_jpath_get_typed (x, proc, "capabilities", false, yajl_t_object, "an object", &caps, &s);
  if (r <= 0)
    return r;
  c->has_caps = true;
  static const char *const set_names[]
      = { "bounding", "effective", "inheritable", "permitted", "ambient" };
  uint64_t *sets[] = { &c->caps.bounding, &c->caps.effective, &c->caps.inheritable,
                       &c->caps.permitted, &c->caps.ambient };
  for (size_t k = 0; k < N_ELEMENTS (set_names); k++)
    {
      yajl_val arr;
      size_t s2;
      r = csr_jpath_get_typed (x, caps, set_names[k], false, yajl_t_array, "an array of strings",
                               &arr, &s2);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      for (size_t i = 0; i < arr->u.array.len; i++)
        {
          yajl_val v = arr->u.array.values[i];
          size_t s3 = csr_jpath_push_index (x, i);
          if (csr_jpath_expect (x, v, yajl_t_string, "a string") < 0)
            return -1;
          size_t cap;
          for (cap = 0; cap < N_ELEMENTS (cap_names); cap++)
            if (strcmp (v->u.string, cap_names[cap]) == 0)
              break;
          /* Unknown names are ignored (crun; runc warns too): a config
           * written for a newer kernel still runs.  The first is kept for
           * create's warning. */
          if (cap == N_ELEMENTS (cap_names))
            {
              if (c->n_unknown_caps++ == 0 && (c->unknown_cap = strdup (v->u.string)) == NULL)
                return csr_jpath_fail (x, "out of memory");
            }
          else
            *sets[k] |= 1ULL << cap;
          csr_jpath_pop (x, s3);
        }
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_rlimits (struct csr_jpath *x, yajl_val proc, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = oci_cfg_get_array_alloc (x, proc, "rlimits", sizeof *c->rlimits, &arr, &s,
                                   (void **)&c->rlimits, &c->n_rlimits);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_rlimit *rl = &c->rlimits[i];
      yajl_val o;
      size_t s2;
      if (csr_jpath_array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (csr_jpath_get_string (x, o, "type", true, &type) < 0
          || csr_jpath_get_u64 (x, o, "soft", true, UINT64_MAX, &rl->soft, NULL) < 0
          || csr_jpath_get_u64 (x, o, "hard", true, UINT64_MAX, &rl->hard, NULL) < 0)
        return -1;
      size_t k;
      for (k = 0; k < N_ELEMENTS (rlimit_names); k++)
        if (strcmp (type, rlimit_names[k].name) == 0)
          break;
      size_t s3 = csr_jpath_push_key (x, "type");
      if (k == N_ELEMENTS (rlimit_names))
        return csr_jpath_fail (x, "unknown rlimit '%s'", type);
      rl->resource = rlimit_names[k].value;
      for (size_t j = 0; j < i; j++)
        if (c->rlimits[j].resource == rl->resource)
          return csr_jpath_fail (x, "duplicate rlimit '%s'", type);
      csr_jpath_pop (x, s3);
      if (rl->soft > rl->hard)
        return csr_jpath_fail (x, "soft limit %" PRIu64 " is above the hard limit %" PRIu64,
                               rl->soft, rl->hard);
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_user (struct csr_jpath *x, yajl_val proc, struct oci_config *c)
{
  yajl_val user;
  size_t s;
  int r = csr_jpath_get_typed (x, proc, "user", false, yajl_t_object, "an object", &user, &s);
  if (r <= 0)
    return r;
  if (csr_jpath_get_u32 (x, user, "uid", true, OCI_ID_MAX, &c->uid, NULL) < 0
      || csr_jpath_get_u32 (x, user, "gid", true, OCI_ID_MAX, &c->gid, NULL) < 0
      || csr_jpath_get_u32 (x, user, "umask", false, UINT32_MAX, &c->umask, &c->has_umask) < 0)
    return -1;
  yajl_val arr;
  size_t s2;
  r = csr_jpath_get_typed (x, user, "additionalGids", false, yajl_t_array, "an array of integers",
                           &arr, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      size_t n = arr->u.array.len;
      if (n)
        {
          c->additional_gids = calloc (n, sizeof *c->additional_gids);
          if (c->additional_gids == NULL)
            return csr_jpath_oom (x);
          c->n_additional_gids = n;
        }
      for (size_t i = 0; i < n; i++)
        {
          size_t s3 = csr_jpath_push_index (x, i);
          if (csr_jpath_u32 (x, arr->u.array.values[i], OCI_ID_MAX, &c->additional_gids[i]) < 0)
            return -1;
          csr_jpath_pop (x, s3);
        }
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_process (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  yajl_val proc;
  size_t s;
  int r = csr_jpath_get_typed (x, doc, "process", false, yajl_t_object, "an object", &proc, &s);
  if (r <= 0)
    return r;
  c->has_process = true;

  if (csr_jpath_get_bool (x, proc, "terminal", &c->terminal) < 0)
    return -1;

  yajl_val cs;
  size_t s2;
  r = csr_jpath_get_typed (x, proc, "consoleSize", false, yajl_t_object, "an object", &cs, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      /* struct winsize holds unsigned shorts. */
      uint32_t h = 0, w = 0;
      if (csr_jpath_get_u32 (x, cs, "height", true, USHRT_MAX, &h, NULL) < 0
          || csr_jpath_get_u32 (x, cs, "width", true, USHRT_MAX, &w, NULL) < 0)
        return -1;
      c->has_console_size = true;
      c->console_height = h;
      c->console_width = w;
      csr_jpath_pop (x, s2);
    }

  if (parse_user (x, proc, c) < 0)
    return -1;

  if (oci_cfg_get_strv (x, proc, "args", true, &c->args, &c->n_args, NULL) < 0)
    return -1;
  if (c->n_args == 0)
    {
      csr_jpath_push_key (x, "args");
      return csr_jpath_fail (x, "must contain at least one element");
    }
  if (c->args[0][0] == '\0')
    {
      csr_jpath_push_key (x, "args");
      csr_jpath_push_index (x, 0);
      return csr_jpath_fail (x, "must not be empty");
    }

  if (oci_cfg_get_strv (x, proc, "env", false, &c->env, &c->n_env, check_env) < 0)
    return -1;
  if (c->env == NULL && (c->env = calloc (1, sizeof *c->env)) == NULL)
    return csr_jpath_oom (x);
  env_dedup (c->env, &c->n_env);

  if (csr_jpath_get_string (x, proc, "cwd", true, &c->cwd) < 0)
    return -1;
  {
    size_t s3 = csr_jpath_push_key (x, "cwd");
    if (oci_cfg_check_absolute (x, c->cwd) < 0)
      return -1;
    csr_jpath_pop (x, s3);
  }

  if (parse_caps (x, proc, c) < 0 || parse_rlimits (x, proc, c) < 0)
    return -1;

  if (csr_jpath_get_bool (x, proc, "noNewPrivileges", &c->no_new_privileges) < 0)
    return -1;
  int64_t oom = 0;
  if (csr_jpath_get_i64 (x, proc, "oomScoreAdj", false, -1000, 1000, &oom, &c->has_oom_score_adj)
      < 0)
    return -1;
  c->oom_score_adj = (int)oom;
  if (csr_jpath_get_string (x, proc, "apparmorProfile", false, &c->apparmor_profile) < 0
      || csr_jpath_get_string (x, proc, "selinuxLabel", false, &c->selinux_label) < 0)
    return -1;

  csr_jpath_pop (x, s);
  return 0;
}

static void
hook_clear (struct oci_hook *h)
{
  free (h->path);
  oci_cfg_strv_free (h->args, h->n_args);
  oci_cfg_strv_free (h->env, h->n_env);
}

static int
parse_hooks (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  yajl_val hooks;
  size_t s;
  int r = csr_jpath_get_typed (x, doc, "hooks", false, yajl_t_object, "an object", &hooks, &s);
  if (r <= 0)
    return r;
  for (int stage = 0; stage < OCI_HOOK_N; stage++)
    {
      yajl_val arr;
      size_t s2;
      r = csr_jpath_get_typed (x, hooks, hook_names[stage], false, yajl_t_array, "an array", &arr,
                               &s2);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      size_t n = arr->u.array.len;
      if (n)
        {
          c->hooks[stage] = calloc (n, sizeof *c->hooks[stage]);
          if (c->hooks[stage] == NULL)
            return csr_jpath_oom (x);
          c->n_hooks[stage] = n;
        }
      for (size_t i = 0; i < n; i++)
        {
          struct oci_hook *h = &c->hooks[stage][i];
          yajl_val o;
          size_t s3;
          if (csr_jpath_array_object (x, arr, i, &o, &s3) < 0)
            return -1;
          if (csr_jpath_get_string (x, o, "path", true, &h->path) < 0)
            return -1;
          size_t s4 = csr_jpath_push_key (x, "path");
          if (oci_cfg_check_absolute (x, h->path) < 0)
            return -1;
          csr_jpath_pop (x, s4);
          if (oci_cfg_get_strv (x, o, "args", false, &h->args, &h->n_args, NULL) < 0
              || oci_cfg_get_strv (x, o, "env", false, &h->env, &h->n_env, check_env) < 0)
            return -1;
          if (h->args == NULL && (h->args = calloc (1, sizeof *h->args)) == NULL)
            return csr_jpath_oom (x);
          if (h->env == NULL && (h->env = calloc (1, sizeof *h->env)) == NULL)
            return csr_jpath_oom (x);
          int64_t timeout = 0;
          bool has_timeout = false;
          if (csr_jpath_get_i64 (x, o, "timeout", false, INT64_MIN, INT64_MAX, &timeout,
                                 &has_timeout)
              < 0)
            return -1;
          if (has_timeout)
            {
              csr_jpath_push_key (x, "timeout");
              if (timeout <= 0)
                return csr_jpath_fail (x, "must be greater than zero, got %" PRId64, timeout);
              if (timeout > INT_MAX)
                return csr_jpath_fail (x, "%" PRId64 " is out of range (1 to %d)", timeout,
                                       INT_MAX);
              h->timeout_s = (int)timeout;
            }
          csr_jpath_pop (x, s3);
        }
      csr_jpath_pop (x, s2);
    }
  csr_jpath_pop (x, s);
  return 0;
}

static int
parse_version (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  if (csr_jpath_get_string (x, doc, "ociVersion", true, &c->oci_version) < 0)
    return -1;
  const char *v = c->oci_version;
  if (!(v[0] == '1' && v[1] == '.' && isdigit ((unsigned char)v[2])))
    {
      csr_jpath_push_key (x, "ociVersion");
      return csr_jpath_fail (x, "unsupported version '%s' (expected 1.x)", v);
    }
  return 0;
}

static int
parse_document (struct csr_jpath *x, yajl_val doc, struct oci_config *c)
{
  if (parse_version (x, doc, c) < 0 || parse_root (x, doc, c) < 0 || parse_mounts (x, doc, c) < 0
      || parse_process (x, doc, c) < 0
      || csr_jpath_get_string (x, doc, "hostname", false, &c->hostname) < 0
      || csr_jpath_get_string (x, doc, "domainname", false, &c->domainname) < 0
      || parse_hooks (x, doc, c) < 0
      || oci_cfg_get_string_map (x, doc, "annotations", &c->annotation_keys, &c->annotation_values,
                                 &c->n_annotations)
             < 0
      || oci_cfg_parse_linux (x, doc, c) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------------- public API */

int
oci_config_parse (const char *json, size_t len, struct oci_config *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  if (json == NULL)
    return csr_error_set (err, EINVAL, "config.json: no data");
  if (csr_json_prescan (json, len, err) < 0)
    return -1;
  cleanup_free char *text = malloc (len + 1);
  if (text == NULL)
    return csr_error_set (err, ENOMEM, "config.json");
  memcpy (text, json, len);
  text[len] = '\0';

  char ebuf[512];
  ebuf[0] = '\0';
  yajl_val doc = yajl_tree_parse (text, ebuf, sizeof ebuf);
  if (doc == NULL)
    {
      /* yajl's verbose message spans lines (the text, then a caret): keep the first. */
      ebuf[strcspn (ebuf, "\n")] = '\0';
      size_t n = strlen (ebuf);
      while (n && (ebuf[n - 1] == ' ' || ebuf[n - 1] == '.'))
        ebuf[--n] = '\0';
      return csr_error_set (err, 0, "invalid JSON: %s", *ebuf ? ebuf : "parse error");
    }

  struct csr_jpath x = { .err = err, .what = "config.json" };
  int r;
  if (doc->type != yajl_t_object)
    r = csr_jpath_fail (&x, "expected a JSON object at the top level, got %s",
                        csr_json_type_name (doc));
  else
    {
      r = csr_jpath_check_duplicates (&x, doc);
      if (r == 0)
        r = parse_document (&x, doc, c);
    }
  yajl_tree_free (doc);
  if (r < 0)
    oci_config_release (c);
  return r;
}

int
oci_config_load (const char *path, struct oci_config *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  /* O_NONBLOCK: a FIFO must not hang us before fstat can refuse it. */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return csr_error_errno (err, "%s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "%s", path);
  if (S_ISDIR (st.st_mode))
    return csr_error_set (err, EISDIR, "%s", path);
  if (!S_ISREG (st.st_mode))
    return csr_error_set (err, 0, "%s: not a regular file", path);
  if ((uintmax_t)st.st_size > OCI_CONFIG_MAX_BYTES)
    return csr_error_set (err, EFBIG, "%s: larger than 4 MiB", path);

  cleanup_free char *buf = NULL;
  size_t len = 0;
  csr_error *rerr = NULL;
  if (csr_read_fd (fd, OCI_CONFIG_MAX_BYTES, &buf, &len, &rerr) < 0)
    {
      /* The file grew after fstat. */
      if (rerr && rerr->status == EFBIG)
        {
          csr_error_free (rerr);
          return csr_error_set (err, EFBIG, "%s: larger than 4 MiB", path);
        }
      if (err && *err == NULL)
        *err = rerr;
      else
        csr_error_free (rerr);
      return csr_error_wrap (err, "%s", path);
    }
  if (oci_config_parse (buf, len, c, err) < 0)
    return csr_error_wrap (err, "%s", path);
  return 0;
}

bool
oci_config_peek_terminal (const char *path)
{
  cleanup_free char *buf = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_read_file (path, OCI_CONFIG_MAX_BYTES, &buf, &len, &e) < 0
      || csr_json_prescan (buf, len, &e) < 0)
    {
      csr_error_free (e);
      return false;
    }
  yajl_val doc = yajl_tree_parse (buf, NULL, 0);
  const char *p[] = { "process", "terminal", NULL };
  bool on = doc != NULL && YAJL_IS_TRUE (yajl_tree_get (doc, p, yajl_t_any));
  yajl_tree_free (doc);
  return on;
}

void
oci_config_release (struct oci_config *c)
{
  if (c == NULL)
    return;
  free (c->oci_version);
  free (c->root_path);
  for (size_t i = 0; i < c->n_mounts; i++)
    {
      free (c->mounts[i].destination);
      free (c->mounts[i].type);
      free (c->mounts[i].source);
      oci_cfg_strv_free (c->mounts[i].options, c->mounts[i].n_options);
    }
  free (c->mounts);
  free (c->additional_gids);
  oci_cfg_strv_free (c->args, c->n_args);
  oci_cfg_strv_free (c->env, c->n_env);
  free (c->cwd);
  free (c->rlimits);
  free (c->apparmor_profile);
  free (c->selinux_label);
  free (c->hostname);
  free (c->domainname);
  for (size_t i = 0; i < c->n_namespaces; i++)
    free (c->namespaces[i].path);
  free (c->namespaces);
  free (c->uid_mappings);
  free (c->gid_mappings);
  oci_cfg_strv_free (c->masked_paths, c->n_masked_paths);
  oci_cfg_strv_free (c->readonly_paths, c->n_readonly_paths);
  free (c->cgroups_path);
  free (c->resources.cpu_cpus);
  free (c->resources.cpu_mems);
  free (c->resources.devices);
  free (c->resources.json);
  free (c->seccomp_json);
  oci_cfg_strv_free (c->sysctl_keys, c->n_sysctl);
  oci_cfg_strv_free (c->sysctl_values, c->n_sysctl);
  for (size_t i = 0; i < c->n_devices; i++)
    free (c->devices[i].path);
  free (c->devices);
  free (c->rootfs_propagation);
  free (c->unknown_cap);
  free (c->mount_label);
  oci_cfg_strv_free (c->annotation_keys, c->n_annotations);
  oci_cfg_strv_free (c->annotation_values, c->n_annotations);
  for (int stage = 0; stage < OCI_HOOK_N; stage++)
    {
      for (size_t i = 0; i < c->n_hooks[stage]; i++)
        hook_clear (&c->hooks[stage][i]);
      free (c->hooks[stage]);
    }
  memset (c, 0, sizeof *c);
}

const char *
oci_config_annotation (const struct oci_config *c, const char *key)
{
  for (size_t i = 0; i < c->n_annotations; i++)
    if (strcmp (c->annotation_keys[i], key) == 0)
      return c->annotation_values[i];
  return NULL;
}

bool
oci_config_has_namespace (const struct oci_config *c, int flag, const char **path)
{
  for (size_t i = 0; i < c->n_namespaces; i++)
    if (c->namespaces[i].flag == flag)
      {
        if (path)
          *path = c->namespaces[i].path;
        return true;
      }
  if (path)
    *path = NULL;
  return false;
}
