/* csrun — config.json (OCI runtime spec 1.0-1.2) parsed strictly with yajl_tree.
 *
 * The document is checked in three passes: a byte scan (no NUL, no comments,
 * no "\u0000" escape, bounded nesting), yajl_tree_parse, a walk refusing
 * duplicate object keys anywhere; then the known fields are read into struct
 * oci_config, each checked against its spec type.  Errors name the JSON path
 * of the offending value ("process.user.uid: ..."). */

#include "config.h"
#include "oci-config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
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
/* Deepest nesting accepted anywhere in the document.  Real configs stay under
 * 10; the bound keeps yajl_tree_free's recursion and yajl_gen's depth limit
 * (YAJL_MAX_DEPTH) out of reach. */
#define OCI_CONFIG_MAX_DEPTH 64
/* uid_t/gid_t (uid_t) -1 means "unchanged" to setresuid(2) and chown(2): not an id. */
#define OCI_ID_MAX ((uint64_t)UINT32_MAX - 1)

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

struct name_value
{
  const char *name;
  int value;
};

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

static const struct name_value namespace_names[] = {
  { "pid", CLONE_NEWPID },       { "network", CLONE_NEWNET }, { "mount", CLONE_NEWNS },
  { "ipc", CLONE_NEWIPC },       { "uts", CLONE_NEWUTS },     { "user", CLONE_NEWUSER },
  { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

static const char *const hook_names[OCI_HOOK_N] = {
  [OCI_HOOK_PRESTART] = "prestart",
  [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
  [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
  [OCI_HOOK_START_CONTAINER] = "startContainer",
  [OCI_HOOK_POSTSTART] = "poststart",
  [OCI_HOOK_POSTSTOP] = "poststop",
};

static const char *const propagation_names[] = {
  "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
};

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

const char *
oci_hook_stage_name (int stage)
{
  if (stage < 0 || stage >= OCI_HOOK_N)
    return "unknown";
  return hook_names[stage];
}

/* ------------------------------------------------------------- error paths */

struct ctx
{
  csr_error **err;
  size_t len;
  char path[1024]; /* "linux.uidMappings[0].size"; truncated when longer */
};

static size_t
path_push_key (struct ctx *x, const char *key)
{
  size_t saved = x->len;
  size_t room = sizeof x->path - x->len;
  int n = snprintf (x->path + x->len, room, "%s%s", x->len ? "." : "", key);
  if (n > 0)
    x->len += (size_t)n < room ? (size_t)n : room - 1;
  return saved;
}

static size_t
path_push_index (struct ctx *x, size_t i)
{
  size_t saved = x->len;
  size_t room = sizeof x->path - x->len;
  int n = snprintf (x->path + x->len, room, "[%zu]", i);
  if (n > 0)
    x->len += (size_t)n < room ? (size_t)n : room - 1;
  return saved;
}

static void
path_pop (struct ctx *x, size_t saved)
{
  x->len = saved;
  x->path[saved] = '\0';
}

/* S with control characters written as C escapes: keys and values quoted in
 * a message come from the document, and the message must stay one line. */
static char *
escape_controls (const char *s)
{
  char *out = malloc (strlen (s) * 4 + 1);
  if (out == NULL)
    return NULL;
  char *o = out;
  for (; *s; s++)
    {
      unsigned char ch = (unsigned char)*s;
      if (ch == '\n')
        o = stpcpy (o, "\\n");
      else if (ch == '\t')
        o = stpcpy (o, "\\t");
      else if (ch < 0x20 || ch == 0x7f)
        o += sprintf (o, "\\x%02x", ch);
      else
        *o++ = (char)ch;
    }
  *o = '\0';
  return out;
}

/* Set the error "PATH: MESSAGE" (just MESSAGE at the top level); returns -1. */
static int fail (struct ctx *x, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

static int
fail (struct ctx *x, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  int r = vasprintf (&msg, fmt, ap);
  va_end (ap);
  if (r < 0)
    return csr_error_set (x->err, ENOMEM, "config.json");
  char *full = NULL;
  if (x->len == 0)
    full = steal_pointer (&msg);
  else if (asprintf (&full, "%s: %s", x->path, msg) < 0)
    full = NULL;
  free (msg);
  if (full == NULL)
    return csr_error_set (x->err, ENOMEM, "config.json");
  char *clean = escape_controls (full);
  free (full);
  if (clean == NULL)
    return csr_error_set (x->err, ENOMEM, "config.json");
  csr_error_set (x->err, 0, "%s", clean);
  free (clean);
  return -1;
}

static int
fail_oom (struct ctx *x)
{
  return csr_error_set (x->err, ENOMEM, "%s", x->len ? x->path : "config.json");
}

const char *
oci_json_type_name (yajl_val v)
{
  switch (v->type)
    {
    case yajl_t_string:
      return "a string";
    case yajl_t_number:
      return "a number";
    case yajl_t_object:
      return "an object";
    case yajl_t_array:
      return "an array";
    case yajl_t_true:
    case yajl_t_false:
      return "a boolean";
    case yajl_t_null:
      return "null";
    default:
      return "an unknown value";
    }
}

/* --------------------------------------------------------- value checkers */

static int
expect_type (struct ctx *x, yajl_val v, yajl_type t, const char *what)
{
  if (v->type == t || (t == yajl_t_true && v->type == yajl_t_false))
    return 0;
  return fail (x, "expected %s, got %s", what, oci_json_type_name (v));
}

/* Whether the number's text is a plain integer: optional '-' and digits. */
static bool
number_is_integral (const char *r)
{
  if (*r == '-')
    r++;
  if (*r == '\0')
    return false;
  for (; *r; r++)
    if (!isdigit ((unsigned char)*r))
      return false;
  return true;
}

/* An unsigned integer in [0, MAX].  Parsed from the number's text so that
 * values above INT64_MAX (rlimits of 2^64-1) are read exactly. */
static int
value_u64 (struct ctx *x, yajl_val v, uint64_t max, uint64_t *out)
{
  if (v->type != yajl_t_number)
    return fail (x, "expected an unsigned integer, got %s", oci_json_type_name (v));
  const char *r = YAJL_GET_NUMBER (v);
  if (!number_is_integral (r) || r[0] == '-')
    return fail (x, "expected an unsigned integer, got %s", r);
  errno = 0;
  unsigned long long n = strtoull (r, NULL, 10);
  if (errno == ERANGE || n > max)
    return fail (x, "%s is out of range (0 to %" PRIu64 ")", r, max);
  *out = n;
  return 0;
}

static int
value_u32 (struct ctx *x, yajl_val v, uint64_t max, uint32_t *out)
{
  uint64_t n;
  if (value_u64 (x, v, max, &n) < 0)
    return -1;
  *out = (uint32_t)n;
  return 0;
}

/* A signed integer in [MIN, MAX] (yajl's own 64-bit conversion). */
static int
value_i64 (struct ctx *x, yajl_val v, int64_t min, int64_t max, int64_t *out)
{
  if (v->type != yajl_t_number)
    return fail (x, "expected an integer, got %s", oci_json_type_name (v));
  const char *r = YAJL_GET_NUMBER (v);
  if (!number_is_integral (r))
    return fail (x, "expected an integer, got %s", r);
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < min || YAJL_GET_INTEGER (v) > max)
    return fail (x, "%s is out of range (%" PRId64 " to %" PRId64 ")", r, min, max);
  *out = YAJL_GET_INTEGER (v);
  return 0;
}

static int
value_string (struct ctx *x, yajl_val v, char **out)
{
  if (v->type != yajl_t_string)
    return fail (x, "expected a string, got %s", oci_json_type_name (v));
  char *s = strdup (v->u.string);
  if (s == NULL)
    return fail_oom (x);
  free (*out);
  *out = s;
  return 0;
}

/* ------------------------------------------------------- member accessors */

static yajl_val
member (yajl_val obj, const char *key)
{
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

/* Look KEY up in OBJ.  Absent (or null when optional): *OUT = NULL, returns 0
 * (or an error when REQUIRED).  Present: pushes KEY onto the path (the caller
 * pops to *SAVED) and returns 1. */
static int
field (struct ctx *x, yajl_val obj, const char *key, bool required, yajl_val *out, size_t *saved)
{
  yajl_val v = member (obj, key);
  *out = NULL;
  if (v == NULL || (v->type == yajl_t_null && !required))
    {
      if (!required)
        return 0;
      size_t s = path_push_key (x, key);
      fail (x, "required field is missing");
      path_pop (x, s);
      return -1;
    }
  *saved = path_push_key (x, key);
  *out = v;
  return 1;
}

static int
get_string (struct ctx *x, yajl_val obj, const char *key, bool required, char **out)
{
  yajl_val v;
  size_t s;
  int r = field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = value_string (x, v, out);
  path_pop (x, s);
  return r;
}

static int
get_bool (struct ctx *x, yajl_val obj, const char *key, bool *out)
{
  yajl_val v;
  size_t s;
  int r = field (x, obj, key, false, &v, &s);
  if (r <= 0)
    return r;
  r = expect_type (x, v, yajl_t_true, "a boolean");
  if (r == 0)
    *out = v->type == yajl_t_true;
  path_pop (x, s);
  return r;
}

static int
get_u64 (struct ctx *x, yajl_val obj, const char *key, bool required, uint64_t max, uint64_t *out,
         bool *present)
{
  yajl_val v;
  size_t s;
  int r = field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = value_u64 (x, v, max, out);
  if (r == 0 && present)
    *present = true;
  path_pop (x, s);
  return r;
}

static int
get_u32 (struct ctx *x, yajl_val obj, const char *key, bool required, uint64_t max, uint32_t *out,
         bool *present)
{
  uint64_t n;
  bool have = false;
  if (get_u64 (x, obj, key, required, max, &n, &have) < 0)
    return -1;
  if (have)
    {
      *out = (uint32_t)n;
      if (present)
        *present = true;
    }
  return 0;
}

static int
get_i64 (struct ctx *x, yajl_val obj, const char *key, bool required, int64_t min, int64_t max,
         int64_t *out, bool *present)
{
  yajl_val v;
  size_t s;
  int r = field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = value_i64 (x, v, min, max, out);
  if (r == 0 && present)
    *present = true;
  path_pop (x, s);
  return r;
}

/* OBJ[KEY] must be of type T when present; *OUT NULL when absent.  The path
 * is left at KEY (pop to *SAVED) when *OUT is set. */
static int
get_typed (struct ctx *x, yajl_val obj, const char *key, bool required, yajl_type t,
           const char *what, yajl_val *out, size_t *saved)
{
  int r = field (x, obj, key, required, out, saved);
  if (r <= 0)
    return r;
  if (expect_type (x, *out, t, what) < 0)
    {
      *out = NULL;
      path_pop (x, *saved);
      return -1;
    }
  return 1;
}

static void
strv_free (char **v, size_t n)
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
typedef int (*str_check_fn) (struct ctx *x, const char *s);

static int
value_strv (struct ctx *x, yajl_val v, char ***out, size_t *n_out, str_check_fn check)
{
  if (expect_type (x, v, yajl_t_array, "an array of strings") < 0)
    return -1;
  size_t n = v->u.array.len;
  char **vec = calloc (n + 1, sizeof *vec);
  if (vec == NULL)
    return fail_oom (x);
  strv_free (*out, *n_out);
  *out = vec;
  *n_out = n;
  for (size_t i = 0; i < n; i++)
    {
      size_t s = path_push_index (x, i);
      int r = value_string (x, v->u.array.values[i], &vec[i]);
      if (r == 0 && check)
        r = check (x, vec[i]);
      path_pop (x, s);
      if (r < 0)
        return -1;
    }
  return 0;
}

static int
get_strv (struct ctx *x, yajl_val obj, const char *key, bool required, char ***out, size_t *n_out,
          str_check_fn check)
{
  yajl_val v;
  size_t s;
  int r = field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = value_strv (x, v, out, n_out, check);
  path_pop (x, s);
  return r;
}

/* An object whose values are all strings, as parallel key/value vectors. */
static int
get_string_map (struct ctx *x, yajl_val obj, const char *key, char ***keys, char ***values,
                size_t *n_out)
{
  yajl_val v;
  size_t s;
  int r = get_typed (x, obj, key, false, yajl_t_object, "an object of strings", &v, &s);
  if (r <= 0)
    return r;
  size_t n = v->u.object.len;
  *keys = calloc (n + 1, sizeof **keys);
  *values = calloc (n + 1, sizeof **values);
  *n_out = n;
  if (*keys == NULL || *values == NULL)
    {
      fail_oom (x);
      path_pop (x, s);
      return -1;
    }
  for (size_t i = 0; i < n; i++)
    {
      const char *k = v->u.object.keys[i];
      if (*k == '\0')
        {
          fail (x, "keys must not be empty");
          path_pop (x, s);
          return -1;
        }
      size_t s2 = path_push_key (x, k);
      r = value_string (x, v->u.object.values[i], &(*values)[i]);
      if (r == 0 && ((*keys)[i] = strdup (k)) == NULL)
        r = fail_oom (x);
      path_pop (x, s2);
      if (r < 0)
        {
          path_pop (x, s);
          return -1;
        }
    }
  path_pop (x, s);
  return 0;
}

/* Element I of array V, checked to be an object; pushes "[I]". */
/* KEY of OBJ, an optional array: *ARR, and an array of its length with
 * ELEM-byte elements in *OUT and *N (left alone when empty).  1 when present,
 * 0 when absent, -1 on an error. */
static int
get_array_alloc (struct ctx *x, yajl_val obj, const char *key, size_t elem, yajl_val *arr,
                 size_t *saved, void **out, size_t *n)
{
  int r = get_typed (x, obj, key, false, yajl_t_array, "an array", arr, saved);
  if (r <= 0)
    return r;
  size_t len = (*arr)->u.array.len;
  if (len)
    {
      *out = calloc (len, elem);
      if (*out == NULL)
        return fail_oom (x);
      *n = len;
    }
  return 1;
}

static int
array_object (struct ctx *x, yajl_val v, size_t i, yajl_val *out, size_t *saved)
{
  *saved = path_push_index (x, i);
  *out = v->u.array.values[i];
  if (expect_type (x, *out, yajl_t_object, "an object") < 0)
    {
      path_pop (x, *saved);
      return -1;
    }
  return 0;
}

/* --------------------------------------------------------- string checks */

static int
check_absolute (struct ctx *x, const char *s)
{
  if (s[0] != '/')
    return fail (x, "expected an absolute path, got '%s'", s);
  return 0;
}

static int
check_env (struct ctx *x, const char *s)
{
  const char *eq = strchr (s, '=');
  if (eq == NULL || eq == s)
    return fail (x, "expected KEY=VALUE, got '%s'", s);
  return 0;
}

/* ------------------------------------------------------------ the config */

static int
parse_root (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  yajl_val root;
  size_t s;
  int r = get_typed (x, doc, "root", true, yajl_t_object, "an object", &root, &s);
  if (r < 0)
    return -1;
  if (get_string (x, root, "path", true, &c->root_path) < 0
      || get_bool (x, root, "readonly", &c->root_readonly) < 0)
    return -1;
  if (c->root_path[0] == '\0')
    {
      path_push_key (x, "path");
      return fail (x, "must not be empty");
    }
  path_pop (x, s);
  return 0;
}

static int
parse_mounts (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, doc, "mounts", sizeof *c->mounts, &arr, &s, (void **)&c->mounts,
                           &c->n_mounts);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_mount *m = &c->mounts[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      if (get_string (x, o, "destination", true, &m->destination) < 0
          || get_string (x, o, "type", false, &m->type) < 0
          || get_string (x, o, "source", false, &m->source) < 0
          || get_strv (x, o, "options", false, &m->options, &m->n_options, NULL) < 0)
        return -1;
      if (m->destination[0] == '\0')
        {
          path_push_key (x, "destination");
          return fail (x, "must not be empty");
        }
      /* runtime-spec 1.1: a relative destination is relative to "/" (deprecated). */
      if (m->destination[0] != '/')
        {
          char *abs = NULL;
          if (asprintf (&abs, "/%s", m->destination) < 0)
            return fail_oom (x);
          free (m->destination);
          m->destination = abs;
        }
      if (m->options == NULL && (m->options = calloc (1, sizeof *m->options)) == NULL)
        return fail_oom (x);
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_caps (struct ctx *x, yajl_val proc, struct oci_config *c)
{
  yajl_val caps;
  size_t s;
  int r = get_typed (x, proc, "capabilities", false, yajl_t_object, "an object", &caps, &s);
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
      r = get_typed (x, caps, set_names[k], false, yajl_t_array, "an array of strings", &arr, &s2);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      for (size_t i = 0; i < arr->u.array.len; i++)
        {
          yajl_val v = arr->u.array.values[i];
          size_t s3 = path_push_index (x, i);
          if (expect_type (x, v, yajl_t_string, "a string") < 0)
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
                return fail (x, "out of memory");
            }
          else
            *sets[k] |= 1ULL << cap;
          path_pop (x, s3);
        }
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_rlimits (struct ctx *x, yajl_val proc, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, proc, "rlimits", sizeof *c->rlimits, &arr, &s, (void **)&c->rlimits,
                           &c->n_rlimits);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_rlimit *rl = &c->rlimits[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (get_string (x, o, "type", true, &type) < 0
          || get_u64 (x, o, "soft", true, UINT64_MAX, &rl->soft, NULL) < 0
          || get_u64 (x, o, "hard", true, UINT64_MAX, &rl->hard, NULL) < 0)
        return -1;
      size_t k;
      for (k = 0; k < N_ELEMENTS (rlimit_names); k++)
        if (strcmp (type, rlimit_names[k].name) == 0)
          break;
      size_t s3 = path_push_key (x, "type");
      if (k == N_ELEMENTS (rlimit_names))
        return fail (x, "unknown rlimit '%s'", type);
      rl->resource = rlimit_names[k].value;
      for (size_t j = 0; j < i; j++)
        if (c->rlimits[j].resource == rl->resource)
          return fail (x, "duplicate rlimit '%s'", type);
      path_pop (x, s3);
      if (rl->soft > rl->hard)
        return fail (x, "soft limit %" PRIu64 " is above the hard limit %" PRIu64, rl->soft,
                     rl->hard);
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_user (struct ctx *x, yajl_val proc, struct oci_config *c)
{
  yajl_val user;
  size_t s;
  int r = get_typed (x, proc, "user", false, yajl_t_object, "an object", &user, &s);
  if (r <= 0)
    return r;
  if (get_u32 (x, user, "uid", true, OCI_ID_MAX, &c->uid, NULL) < 0
      || get_u32 (x, user, "gid", true, OCI_ID_MAX, &c->gid, NULL) < 0
      || get_u32 (x, user, "umask", false, UINT32_MAX, &c->umask, &c->has_umask) < 0)
    return -1;
  yajl_val arr;
  size_t s2;
  r = get_typed (x, user, "additionalGids", false, yajl_t_array, "an array of integers", &arr, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      size_t n = arr->u.array.len;
      if (n)
        {
          c->additional_gids = calloc (n, sizeof *c->additional_gids);
          if (c->additional_gids == NULL)
            return fail_oom (x);
          c->n_additional_gids = n;
        }
      for (size_t i = 0; i < n; i++)
        {
          size_t s3 = path_push_index (x, i);
          if (value_u32 (x, arr->u.array.values[i], OCI_ID_MAX, &c->additional_gids[i]) < 0)
            return -1;
          path_pop (x, s3);
        }
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_process (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  yajl_val proc;
  size_t s;
  int r = get_typed (x, doc, "process", false, yajl_t_object, "an object", &proc, &s);
  if (r <= 0)
    return r;
  c->has_process = true;

  if (get_bool (x, proc, "terminal", &c->terminal) < 0)
    return -1;

  yajl_val cs;
  size_t s2;
  r = get_typed (x, proc, "consoleSize", false, yajl_t_object, "an object", &cs, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      /* struct winsize holds unsigned shorts. */
      uint32_t h = 0, w = 0;
      if (get_u32 (x, cs, "height", true, USHRT_MAX, &h, NULL) < 0
          || get_u32 (x, cs, "width", true, USHRT_MAX, &w, NULL) < 0)
        return -1;
      c->has_console_size = true;
      c->console_height = h;
      c->console_width = w;
      path_pop (x, s2);
    }

  if (parse_user (x, proc, c) < 0)
    return -1;

  if (get_strv (x, proc, "args", true, &c->args, &c->n_args, NULL) < 0)
    return -1;
  if (c->n_args == 0)
    {
      path_push_key (x, "args");
      return fail (x, "must contain at least one element");
    }
  if (c->args[0][0] == '\0')
    {
      path_push_key (x, "args");
      path_push_index (x, 0);
      return fail (x, "must not be empty");
    }

  if (get_strv (x, proc, "env", false, &c->env, &c->n_env, check_env) < 0)
    return -1;
  if (c->env == NULL && (c->env = calloc (1, sizeof *c->env)) == NULL)
    return fail_oom (x);
  env_dedup (c->env, &c->n_env);

  if (get_string (x, proc, "cwd", true, &c->cwd) < 0)
    return -1;
  {
    size_t s3 = path_push_key (x, "cwd");
    if (check_absolute (x, c->cwd) < 0)
      return -1;
    path_pop (x, s3);
  }

  if (parse_caps (x, proc, c) < 0 || parse_rlimits (x, proc, c) < 0)
    return -1;

  if (get_bool (x, proc, "noNewPrivileges", &c->no_new_privileges) < 0)
    return -1;
  int64_t oom = 0;
  if (get_i64 (x, proc, "oomScoreAdj", false, -1000, 1000, &oom, &c->has_oom_score_adj) < 0)
    return -1;
  c->oom_score_adj = (int)oom;
  if (get_string (x, proc, "apparmorProfile", false, &c->apparmor_profile) < 0
      || get_string (x, proc, "selinuxLabel", false, &c->selinux_label) < 0)
    return -1;

  path_pop (x, s);
  return 0;
}

static void
hook_clear (struct oci_hook *h)
{
  free (h->path);
  strv_free (h->args, h->n_args);
  strv_free (h->env, h->n_env);
}

static int
parse_hooks (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  yajl_val hooks;
  size_t s;
  int r = get_typed (x, doc, "hooks", false, yajl_t_object, "an object", &hooks, &s);
  if (r <= 0)
    return r;
  for (int stage = 0; stage < OCI_HOOK_N; stage++)
    {
      yajl_val arr;
      size_t s2;
      r = get_typed (x, hooks, hook_names[stage], false, yajl_t_array, "an array", &arr, &s2);
      if (r < 0)
        return -1;
      if (r == 0)
        continue;
      size_t n = arr->u.array.len;
      if (n)
        {
          c->hooks[stage] = calloc (n, sizeof *c->hooks[stage]);
          if (c->hooks[stage] == NULL)
            return fail_oom (x);
          c->n_hooks[stage] = n;
        }
      for (size_t i = 0; i < n; i++)
        {
          struct oci_hook *h = &c->hooks[stage][i];
          yajl_val o;
          size_t s3;
          if (array_object (x, arr, i, &o, &s3) < 0)
            return -1;
          if (get_string (x, o, "path", true, &h->path) < 0)
            return -1;
          size_t s4 = path_push_key (x, "path");
          if (check_absolute (x, h->path) < 0)
            return -1;
          path_pop (x, s4);
          if (get_strv (x, o, "args", false, &h->args, &h->n_args, NULL) < 0
              || get_strv (x, o, "env", false, &h->env, &h->n_env, check_env) < 0)
            return -1;
          if (h->args == NULL && (h->args = calloc (1, sizeof *h->args)) == NULL)
            return fail_oom (x);
          if (h->env == NULL && (h->env = calloc (1, sizeof *h->env)) == NULL)
            return fail_oom (x);
          int64_t timeout = 0;
          bool has_timeout = false;
          if (get_i64 (x, o, "timeout", false, INT64_MIN, INT64_MAX, &timeout, &has_timeout) < 0)
            return -1;
          if (has_timeout)
            {
              path_push_key (x, "timeout");
              if (timeout <= 0)
                return fail (x, "must be greater than zero, got %" PRId64, timeout);
              if (timeout > INT_MAX)
                return fail (x, "%" PRId64 " is out of range (1 to %d)", timeout, INT_MAX);
              h->timeout_s = (int)timeout;
            }
          path_pop (x, s3);
        }
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_namespaces (struct ctx *x, yajl_val lx, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, lx, "namespaces", sizeof *c->namespaces, &arr, &s,
                           (void **)&c->namespaces, &c->n_namespaces);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_namespace *ns = &c->namespaces[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (get_string (x, o, "type", true, &type) < 0
          || get_string (x, o, "path", false, &ns->path) < 0)
        return -1;
      size_t k;
      for (k = 0; k < N_ELEMENTS (namespace_names); k++)
        if (strcmp (type, namespace_names[k].name) == 0)
          break;
      size_t s3 = path_push_key (x, "type");
      if (k == N_ELEMENTS (namespace_names))
        return fail (x, "unknown namespace type '%s'", type);
      ns->flag = namespace_names[k].value;
      for (size_t j = 0; j < i; j++)
        if (c->namespaces[j].flag == ns->flag)
          return fail (x, "duplicate namespace '%s'", type);
      path_pop (x, s3);
      /* Go writers omit an empty path; treat "" as "no path" like they do. */
      if (ns->path && ns->path[0] == '\0')
        {
          free (ns->path);
          ns->path = NULL;
        }
      if (ns->path)
        {
          s3 = path_push_key (x, "path");
          if (check_absolute (x, ns->path) < 0)
            return -1;
          path_pop (x, s3);
        }
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_idmaps (struct ctx *x, yajl_val lx, const char *key, struct oci_idmap **out, size_t *n_out)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, lx, key, sizeof **out, &arr, &s, (void **)out, n_out);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_idmap *m = &(*out)[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      if (get_u32 (x, o, "containerID", true, UINT32_MAX, &m->container_id, NULL) < 0
          || get_u32 (x, o, "hostID", true, UINT32_MAX, &m->host_id, NULL) < 0
          || get_u32 (x, o, "size", true, UINT32_MAX, &m->size, NULL) < 0)
        return -1;
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static int
parse_devices (struct ctx *x, yajl_val lx, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, lx, "devices", sizeof *c->devices, &arr, &s, (void **)&c->devices,
                           &c->n_devices);
  if (r <= 0)
    return r;
  size_t n = arr->u.array.len;
  for (size_t i = 0; i < n; i++)
    {
      struct oci_device *d = &c->devices[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      cleanup_free char *type = NULL;
      if (get_string (x, o, "type", true, &type) < 0)
        return -1;
      size_t s3 = path_push_key (x, "type");
      if (strcmp (type, "c") != 0 && strcmp (type, "b") != 0 && strcmp (type, "u") != 0
          && strcmp (type, "p") != 0)
        return fail (x, "unknown device type '%s'", type);
      path_pop (x, s3);
      d->type = type[0];
      if (get_string (x, o, "path", true, &d->path) < 0)
        return -1;
      s3 = path_push_key (x, "path");
      if (check_absolute (x, d->path) < 0)
        return -1;
      path_pop (x, s3);
      bool need_numbers = d->type != 'p';
      if (get_i64 (x, o, "major", need_numbers, INT64_MIN, INT64_MAX, &d->major, NULL) < 0
          || get_i64 (x, o, "minor", need_numbers, INT64_MIN, INT64_MAX, &d->minor, NULL) < 0
          || get_u32 (x, o, "fileMode", false, UINT32_MAX, &d->file_mode, &d->has_file_mode) < 0
          || get_u32 (x, o, "uid", false, OCI_ID_MAX, &d->uid, &d->has_uid) < 0
          || get_u32 (x, o, "gid", false, OCI_ID_MAX, &d->gid, &d->has_gid) < 0)
        return -1;
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

/* linux.resources.devices, in order (the device cgroup, see oci/devices.h).
 * Strict: "allow" is required; "access" too (runc refuses a rule without
 * one, and the spec gives an absent one no meaning); major and minor are
 * device numbers (at most 32 bits: what the kernel compares) or -1 (any). */
static int
parse_resource_devices (struct ctx *x, yajl_val res, struct oci_config *c)
{
  yajl_val arr;
  size_t s;
  int r = get_array_alloc (x, res, "devices", sizeof *c->resources.devices, &arr, &s,
                           (void **)&c->resources.devices, &c->resources.n_devices);
  if (r <= 0)
    return r;
  c->resources.has_devices = true;
  for (size_t i = 0; i < arr->u.array.len; i++)
    {
      struct oci_dev_rule *d = &c->resources.devices[i];
      yajl_val o;
      size_t s2;
      if (array_object (x, arr, i, &o, &s2) < 0)
        return -1;
      yajl_val allow;
      size_t s3;
      if (get_typed (x, o, "allow", true, yajl_t_true, "a boolean", &allow, &s3) < 0)
        return -1;
      d->allow = allow->type == yajl_t_true;
      path_pop (x, s3);
      cleanup_free char *type = NULL;
      cleanup_free char *access = NULL;
      bool has_major = false, has_minor = false;
      if (get_string (x, o, "type", false, &type) < 0
          || get_i64 (x, o, "major", false, -1, UINT32_MAX, &d->major, &has_major) < 0
          || get_i64 (x, o, "minor", false, -1, UINT32_MAX, &d->minor, &has_minor) < 0
          || get_string (x, o, "access", true, &access) < 0)
        return -1;
      if (!has_major)
        d->major = -1;
      if (!has_minor)
        d->minor = -1;
      if (type && strcmp (type, "a") != 0 && strcmp (type, "b") != 0 && strcmp (type, "c") != 0)
        {
          path_push_key (x, "type");
          return fail (x, "unknown device type '%s' (expected a, b or c)", type);
        }
      d->type = type ? type[0] : 'a';
      /* Letters in any order; others are ignored, as runc ignores them
       * (its own tests write "rwa"); none of r, w, m is an error. */
      if (strpbrk (access, "rwm") == NULL)
        {
          path_push_key (x, "access");
          return fail (x, "expected a combination of 'r', 'w' and 'm', got '%s'", access);
        }
      d->access = (strchr (access, 'r') ? OCI_DEV_READ : 0U)
                  | (strchr (access, 'w') ? OCI_DEV_WRITE : 0U)
                  | (strchr (access, 'm') ? OCI_DEV_MKNOD : 0U);
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

static yajl_gen_status gen_value (yajl_gen g, yajl_val v);

static void
yajl_gen_freep (yajl_gen *g)
{
  if (*g)
    yajl_gen_free (*g);
}
#define cleanup_yajl_gen __attribute__ ((cleanup (yajl_gen_freep)))

/* *OUT = V as JSON text (malloc'd), for a part another parser reads. */
static int
value_text (struct ctx *x, yajl_val v, char **out)
{
  cleanup_yajl_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return fail_oom (x);
  yajl_gen_status st = gen_value (g, v);
  const unsigned char *buf = NULL;
  size_t len = 0;
  if (st == yajl_gen_status_ok)
    st = yajl_gen_get_buf (g, &buf, &len);
  if (st != yajl_gen_status_ok)
    return fail (x, "cannot re-serialise (yajl_gen error %d)", (int)st);
  *out = strndup ((const char *)buf, len);
  return *out == NULL ? fail_oom (x) : 0;
}

static int
parse_resources (struct ctx *x, yajl_val lx, struct oci_config *c)
{
  yajl_val res;
  size_t s;
  int r = get_typed (x, lx, "resources", false, yajl_t_object, "an object", &res, &s);
  if (r <= 0)
    return r;
  if (parse_resource_devices (x, res, c) < 0)
    return -1;
  /* The rest (blockIO, hugepageLimits, network, unified...) is
   * oci_cgroup_resources_parse's: it gets the object as text. */
  if (value_text (x, res, &c->resources.json) < 0)
    return -1;

  yajl_val o;
  size_t s2;
  r = get_typed (x, res, "memory", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (get_i64 (x, o, "limit", false, -1, INT64_MAX, &c->resources.memory_limit,
                   &c->resources.has_memory_limit)
              < 0
          || get_i64 (x, o, "swap", false, -1, INT64_MAX, &c->resources.memory_swap,
                      &c->resources.has_memory_swap)
                 < 0)
        return -1;
      path_pop (x, s2);
    }

  r = get_typed (x, res, "pids", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (get_i64 (x, o, "limit", true, INT64_MIN, INT64_MAX, &c->resources.pids_limit,
                   &c->resources.has_pids_limit)
          < 0)
        return -1;
      path_pop (x, s2);
    }

  r = get_typed (x, res, "cpu", false, yajl_t_object, "an object", &o, &s2);
  if (r < 0)
    return -1;
  if (r > 0)
    {
      if (get_i64 (x, o, "quota", false, -1, INT64_MAX, &c->resources.cpu_quota,
                   &c->resources.has_cpu_quota)
              < 0
          || get_u64 (x, o, "period", false, UINT64_MAX, &c->resources.cpu_period,
                      &c->resources.has_cpu_period)
                 < 0
          || get_u64 (x, o, "shares", false, UINT64_MAX, &c->resources.cpu_shares,
                      &c->resources.has_cpu_shares)
                 < 0
          || get_string (x, o, "cpus", false, &c->resources.cpu_cpus) < 0
          || get_string (x, o, "mems", false, &c->resources.cpu_mems) < 0)
        return -1;
      path_pop (x, s2);
    }
  path_pop (x, s);
  return 0;
}

/* ------------------------------------------------- seccomp re-serialising */

static yajl_gen_status
gen_value (yajl_gen g, yajl_val v)
{
  yajl_gen_status st = yajl_gen_status_ok;
  switch (v->type)
    {
    case yajl_t_string:
      return yajl_gen_string (g, (const unsigned char *)v->u.string, strlen (v->u.string));
    case yajl_t_number:
      return yajl_gen_number (g, v->u.number.r, strlen (v->u.number.r));
    case yajl_t_true:
    case yajl_t_false:
      return yajl_gen_bool (g, v->type == yajl_t_true);
    case yajl_t_null:
      return yajl_gen_null (g);
    case yajl_t_object:
      st = yajl_gen_map_open (g);
      for (size_t i = 0; st == yajl_gen_status_ok && i < v->u.object.len; i++)
        {
          const char *k = v->u.object.keys[i];
          st = yajl_gen_string (g, (const unsigned char *)k, strlen (k));
          if (st == yajl_gen_status_ok)
            st = gen_value (g, v->u.object.values[i]);
        }
      return st == yajl_gen_status_ok ? yajl_gen_map_close (g) : st;
    case yajl_t_array:
      st = yajl_gen_array_open (g);
      for (size_t i = 0; st == yajl_gen_status_ok && i < v->u.array.len; i++)
        st = gen_value (g, v->u.array.values[i]);
      return st == yajl_gen_status_ok ? yajl_gen_array_close (g) : st;
    default:
      return yajl_gen_invalid_string;
    }
}

static int
parse_seccomp (struct ctx *x, yajl_val lx, struct oci_config *c)
{
  yajl_val sc;
  size_t s;
  int r = get_typed (x, lx, "seccomp", false, yajl_t_object, "an object", &sc, &s);
  if (r <= 0)
    return r;
  if (value_text (x, sc, &c->seccomp_json) < 0)
    return -1;
  path_pop (x, s);
  return 0;
}

static int
parse_linux (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  yajl_val lx;
  size_t s;
  int r = get_typed (x, doc, "linux", false, yajl_t_object, "an object", &lx, &s);
  if (r <= 0)
    return r;
  if (parse_namespaces (x, lx, c) < 0
      || parse_idmaps (x, lx, "uidMappings", &c->uid_mappings, &c->n_uid_mappings) < 0
      || parse_idmaps (x, lx, "gidMappings", &c->gid_mappings, &c->n_gid_mappings) < 0
      || parse_devices (x, lx, c) < 0
      || get_string (x, lx, "cgroupsPath", false, &c->cgroups_path) < 0
      || parse_resources (x, lx, c) < 0 || parse_seccomp (x, lx, c) < 0
      || get_string_map (x, lx, "sysctl", &c->sysctl_keys, &c->sysctl_values, &c->n_sysctl) < 0
      || get_strv (x, lx, "maskedPaths", false, &c->masked_paths, &c->n_masked_paths,
                   check_absolute)
             < 0
      || get_strv (x, lx, "readonlyPaths", false, &c->readonly_paths, &c->n_readonly_paths,
                   check_absolute)
             < 0
      || get_string (x, lx, "mountLabel", false, &c->mount_label) < 0
      || get_string (x, lx, "rootfsPropagation", false, &c->rootfs_propagation) < 0)
    return -1;
  if (c->rootfs_propagation)
    {
      size_t k;
      for (k = 0; k < N_ELEMENTS (propagation_names); k++)
        if (strcmp (c->rootfs_propagation, propagation_names[k]) == 0)
          break;
      if (k == N_ELEMENTS (propagation_names))
        {
          path_push_key (x, "rootfsPropagation");
          return fail (x, "unknown propagation '%s'", c->rootfs_propagation);
        }
    }
  path_pop (x, s);
  return 0;
}

static int
parse_version (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  if (get_string (x, doc, "ociVersion", true, &c->oci_version) < 0)
    return -1;
  const char *v = c->oci_version;
  if (!(v[0] == '1' && v[1] == '.' && isdigit ((unsigned char)v[2])))
    {
      path_push_key (x, "ociVersion");
      return fail (x, "unsupported version '%s' (expected 1.x)", v);
    }
  return 0;
}

static int
parse_document (struct ctx *x, yajl_val doc, struct oci_config *c)
{
  if (parse_version (x, doc, c) < 0 || parse_root (x, doc, c) < 0 || parse_mounts (x, doc, c) < 0
      || parse_process (x, doc, c) < 0 || get_string (x, doc, "hostname", false, &c->hostname) < 0
      || get_string (x, doc, "domainname", false, &c->domainname) < 0 || parse_hooks (x, doc, c) < 0
      || get_string_map (x, doc, "annotations", &c->annotation_keys, &c->annotation_values,
                         &c->n_annotations)
             < 0
      || parse_linux (x, doc, c) < 0)
    return -1;
  return 0;
}

/* ------------------------------------------------------- document checks */

/* What yajl_tree_parse would let through or choke on: NUL bytes (the copy is a
 * C string), comments (yajl_tree_parse enables them), "\u0000" (truncates the
 * C string silently), and nesting deep enough to exhaust the stack when the
 * tree is freed. */
int
oci_json_prescan (const char *s, size_t len, csr_error **err)
{
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      char ch = s[i];
      if (ch == '\0')
        return csr_error_set (err, 0, "invalid JSON: NUL byte at offset %zu", i);
      if (in_string)
        {
          if (ch == '"')
            in_string = false;
          else if (ch == '\\' && i + 1 < len)
            {
              if (s[i + 1] == 'u' && len - i >= 6 && memcmp (s + i + 2, "0000", 4) == 0)
                return csr_error_set (
                    err, 0, "invalid JSON: string with a \\u0000 escape at offset %zu", i);
              i++;
            }
          continue;
        }
      switch (ch)
        {
        case '"':
          in_string = true;
          break;
        case '[':
        case '{':
          if (++depth > OCI_CONFIG_MAX_DEPTH)
            return csr_error_set (err, 0,
                                  "invalid JSON: nested deeper than %d levels at offset %zu",
                                  OCI_CONFIG_MAX_DEPTH, i);
          break;
        case ']':
        case '}':
          if (depth)
            depth--;
          break;
        case '/':
          return csr_error_set (err, 0, "invalid JSON: comment at offset %zu", i);
        default:
          break;
        }
    }
  return 0;
}

static int
strcmp_p (const void *a, const void *b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate keys mean different things to different parsers (yajl_tree
 * keeps the first, Go's encoding/json the last): refuse them everywhere. */
static int
check_duplicate_keys (struct ctx *x, yajl_val v)
{
  if (v->type == yajl_t_array)
    {
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          size_t s = path_push_index (x, i);
          if (check_duplicate_keys (x, v->u.array.values[i]) < 0)
            return -1;
          path_pop (x, s);
        }
      return 0;
    }
  if (v->type != yajl_t_object)
    return 0;
  size_t n = v->u.object.len;
  if (n > 1)
    {
      const char *dup = NULL;
      if (n <= 16)
        {
          for (size_t i = 1; i < n && !dup; i++)
            for (size_t j = 0; j < i && !dup; j++)
              if (strcmp (v->u.object.keys[i], v->u.object.keys[j]) == 0)
                dup = v->u.object.keys[i];
        }
      else
        {
          cleanup_free const char **keys = malloc (n * sizeof *keys);
          if (keys == NULL)
            return fail_oom (x);
          memcpy (keys, v->u.object.keys, n * sizeof *keys);
          qsort (keys, n, sizeof *keys, strcmp_p);
          for (size_t i = 1; i < n && !dup; i++)
            if (strcmp (keys[i], keys[i - 1]) == 0)
              dup = keys[i];
        }
      if (dup)
        return fail (x, "duplicate key '%s'", dup);
    }
  for (size_t i = 0; i < n; i++)
    {
      size_t s = path_push_key (x, v->u.object.keys[i]);
      if (check_duplicate_keys (x, v->u.object.values[i]) < 0)
        return -1;
      path_pop (x, s);
    }
  return 0;
}

/* ------------------------------------------------------------- public API */

int
oci_config_parse (const char *json, size_t len, struct oci_config *c, csr_error **err)
{
  memset (c, 0, sizeof *c);
  if (json == NULL)
    return csr_error_set (err, EINVAL, "config.json: no data");
  if (oci_json_prescan (json, len, err) < 0)
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

  struct ctx x = { .err = err };
  int r;
  if (doc->type != yajl_t_object)
    r = fail (&x, "expected a JSON object at the top level, got %s", oci_json_type_name (doc));
  else
    {
      r = check_duplicate_keys (&x, doc);
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
      || oci_json_prescan (buf, len, &e) < 0)
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
      strv_free (c->mounts[i].options, c->mounts[i].n_options);
    }
  free (c->mounts);
  free (c->additional_gids);
  strv_free (c->args, c->n_args);
  strv_free (c->env, c->n_env);
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
  strv_free (c->masked_paths, c->n_masked_paths);
  strv_free (c->readonly_paths, c->n_readonly_paths);
  free (c->cgroups_path);
  free (c->resources.cpu_cpus);
  free (c->resources.cpu_mems);
  free (c->resources.devices);
  free (c->resources.json);
  free (c->seccomp_json);
  strv_free (c->sysctl_keys, c->n_sysctl);
  strv_free (c->sysctl_values, c->n_sysctl);
  for (size_t i = 0; i < c->n_devices; i++)
    free (c->devices[i].path);
  free (c->devices);
  free (c->rootfs_propagation);
  free (c->unknown_cap);
  free (c->mount_label);
  strv_free (c->annotation_keys, c->n_annotations);
  strv_free (c->annotation_values, c->n_annotations);
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

/* -------------------------------------------------------- `csrun spec` */

/* A yajl_gen that remembers its first error, so the builder below reads as
 * the document it writes. */
struct jgen
{
  yajl_gen g;
  yajl_gen_status st;
};

static void
j_str (struct jgen *j, const char *s)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_string (j->g, (const unsigned char *)s, strlen (s));
}

static void
j_int (struct jgen *j, long long n)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_integer (j->g, n);
}

static void
j_bool (struct jgen *j, bool b)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_bool (j->g, b);
}

static void
j_open (struct jgen *j)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_map_open (j->g);
}

static void
j_close (struct jgen *j)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_map_close (j->g);
}

static void
j_aopen (struct jgen *j)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_array_open (j->g);
}

static void
j_aclose (struct jgen *j)
{
  if (j->st == yajl_gen_status_ok)
    j->st = yajl_gen_array_close (j->g);
}

static void
j_kv (struct jgen *j, const char *key, const char *value)
{
  j_str (j, key);
  j_str (j, value);
}

/* KEY: [ each string of the NULL-terminated V ] */
static void
j_strv (struct jgen *j, const char *key, const char *const *v)
{
  j_str (j, key);
  j_aopen (j);
  for (; *v; v++)
    j_str (j, *v);
  j_aclose (j);
}

static void
j_mount (struct jgen *j, const char *dest, const char *type, const char *source,
         const char *const *options)
{
  j_open (j);
  j_kv (j, "destination", dest);
  j_kv (j, "type", type);
  j_kv (j, "source", source);
  if (options)
    j_strv (j, "options", options);
  j_close (j);
}

static void
j_idmap (struct jgen *j, const char *key, unsigned long host_id)
{
  j_str (j, key);
  j_aopen (j);
  j_open (j);
  j_str (j, "containerID");
  j_int (j, 0);
  j_str (j, "hostID");
  j_int (j, (long long)host_id);
  j_str (j, "size");
  j_int (j, 1);
  j_close (j);
  j_aclose (j);
}

char *
oci_config_default_json (bool rootless, uid_t uid, gid_t gid)
{
  static const char *const env[]
      = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL };
  static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
  static const char *const dev_opts[]
      = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
  static const char *const pts_opts[]
      = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5", NULL };
  static const char *const shm_opts[]
      = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
  static const char *const mqueue_opts[] = { "nosuid", "noexec", "nodev", NULL };
  static const char *const sysfs_opts[] = { "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const sysfs_bind_opts[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
  static const char *const cgroup_opts[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };
  /* runc's and crun's `spec` list (the same ten), plus what Docker's default
   * masks on top: /proc/interrupts (per-CPU interrupt counts, a side
   * channel) and /sys/devices/virtual/powercap (RAPL energy counters,
   * CVE-2020-8694).  /proc/cmdline stays readable, as in all three: it is
   * boot configuration, and tools in containers read it. */
  static const char *const masked[] = { "/proc/acpi",
                                        "/proc/asound",
                                        "/proc/interrupts",
                                        "/proc/kcore",
                                        "/proc/keys",
                                        "/proc/latency_stats",
                                        "/proc/timer_list",
                                        "/proc/timer_stats",
                                        "/proc/sched_debug",
                                        "/sys/devices/virtual/powercap",
                                        "/sys/firmware",
                                        "/proc/scsi",
                                        NULL };
  static const char *const readonly[]
      = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL };
  static const char *const namespaces[] = { "pid", "network", "ipc", "uts", "mount", NULL };

  cleanup_yajl_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return NULL;
  yajl_gen_config (g, yajl_gen_beautify, 1);
  yajl_gen_config (g, yajl_gen_indent_string, "  ");
  struct jgen jg = { .g = g, .st = yajl_gen_status_ok };
  struct jgen *j = &jg;

  j_open (j);
  j_kv (j, "ociVersion", "1.0.2");

  j_str (j, "process");
  j_open (j);
  j_str (j, "terminal");
  j_bool (j, true);
  j_str (j, "user");
  j_open (j);
  j_str (j, "uid");
  j_int (j, 0);
  j_str (j, "gid");
  j_int (j, 0);
  j_close (j);
  j_strv (j, "args", (const char *const[]){ "sh", NULL });
  j_strv (j, "env", env);
  j_kv (j, "cwd", "/");
  j_str (j, "capabilities");
  j_open (j);
  j_strv (j, "bounding", caps);
  j_strv (j, "effective", caps);
  j_strv (j, "permitted", caps);
  j_close (j);
  j_str (j, "rlimits");
  j_aopen (j);
  j_open (j);
  j_kv (j, "type", "RLIMIT_NOFILE");
  j_str (j, "hard");
  j_int (j, 1024);
  j_str (j, "soft");
  j_int (j, 1024);
  j_close (j);
  j_aclose (j);
  j_str (j, "noNewPrivileges");
  j_bool (j, true);
  j_close (j);

  j_str (j, "root");
  j_open (j);
  j_kv (j, "path", "rootfs");
  j_str (j, "readonly");
  j_bool (j, true);
  j_close (j);

  j_kv (j, "hostname", "csrun");

  j_str (j, "mounts");
  j_aopen (j);
  j_mount (j, "/proc", "proc", "proc", NULL);
  j_mount (j, "/dev", "tmpfs", "tmpfs", dev_opts);
  /* In a user namespace the host's tty group (5) is unmapped: mounting devpts
   * with gid=5 fails, so the rootless spec leaves the option out. */
  if (rootless)
    {
      const char *opts[N_ELEMENTS (pts_opts)];
      size_t n = 0;
      for (const char *const *o = pts_opts; *o; o++)
        if (strncmp (*o, "gid=", 4) != 0)
          opts[n++] = *o;
      opts[n] = NULL;
      j_mount (j, "/dev/pts", "devpts", "devpts", opts);
    }
  else
    j_mount (j, "/dev/pts", "devpts", "devpts", pts_opts);
  j_mount (j, "/dev/shm", "tmpfs", "shm", shm_opts);
  j_mount (j, "/dev/mqueue", "mqueue", "mqueue", mqueue_opts);
  /* sysfs can't be mounted by a user namespace that doesn't own the network
   * namespace: bind the host's instead.  Nor can cgroup v1 hierarchies be. */
  if (rootless)
    j_mount (j, "/sys", "none", "/sys", sysfs_bind_opts);
  else
    {
      j_mount (j, "/sys", "sysfs", "sysfs", sysfs_opts);
      j_mount (j, "/sys/fs/cgroup", "cgroup", "cgroup", cgroup_opts);
    }
  j_aclose (j);

  j_str (j, "linux");
  j_open (j);
  if (rootless)
    {
      j_idmap (j, "uidMappings", (unsigned long)uid);
      j_idmap (j, "gidMappings", (unsigned long)gid);
    }
  else
    {
      j_str (j, "resources");
      j_open (j);
      j_str (j, "devices");
      j_aopen (j);
      j_open (j);
      j_str (j, "allow");
      j_bool (j, false);
      j_kv (j, "access", "rwm");
      j_close (j);
      j_aclose (j);
      j_close (j);
    }
  j_str (j, "namespaces");
  j_aopen (j);
  for (const char *const *ns = namespaces; *ns; ns++)
    {
      j_open (j);
      j_kv (j, "type", *ns);
      j_close (j);
    }
  /* A cgroup namespace only on a cgroup v2 (unified) host, as `crun spec`
   * (runc's has none): on v1 and hybrid hosts runc's tests add one, and a
   * second entry is an error for runc, crun and csrun alike. */
  struct statfs sfs;
  if (statfs ("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    {
      j_open (j);
      j_kv (j, "type", "cgroup");
      j_close (j);
    }
  if (rootless)
    {
      j_open (j);
      j_kv (j, "type", "user");
      j_close (j);
    }
  j_aclose (j);
  j_strv (j, "maskedPaths", masked);
  j_strv (j, "readonlyPaths", readonly);
  j_close (j);

  j_close (j);

  const unsigned char *buf = NULL;
  size_t len = 0;
  if (jg.st != yajl_gen_status_ok || yajl_gen_get_buf (g, &buf, &len) != yajl_gen_status_ok)
    return NULL;
  bool nl = len > 0 && buf[len - 1] == '\n';
  char *out = malloc (len + 2);
  if (out == NULL)
    return NULL;
  memcpy (out, buf, len);
  if (!nl)
    out[len++] = '\n';
  out[len] = '\0';
  return out;
}
