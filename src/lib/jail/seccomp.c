/* csrun — seccomp: an OCI seccomp profile (JSON) compiled with libseccomp
 * into the BPF program the jail loads last before exec (the cache of the
 * exported BPF is seccomp-cache.c).
 *
 * Semantics beyond the OCI schema (documented in csrun-policy(5)):
 *  - the filter always holds the native architecture; "architectures" adds
 *    only those that can run on this host (x86 and x32 on x86_64, arm on
 *    aarch64, ...), others are skipped.  System calls of any architecture not
 *    in the filter kill the whole process (SCMP_FLTATR_ACT_BADARCH).
 *  - "includes"/"excludes" (Docker's extension) are evaluated for a jail
 *    without capabilities: an entry that includes capabilities never applies,
 *    excluded capabilities never exclude; "arches" is matched against the
 *    native architecture; "minKernel" against uname(2).
 *  - the args of one entry are ANDed, unless one argument is compared more
 *    than once: libseccomp allows one comparison per argument and rule, so
 *    such an entry becomes one rule per comparison, ORed.  The runtime spec
 *    is silent; runc and crun both do this, and runtime-tools' default
 *    profile relies on it (personality with three SCMP_CMP_EQ on arg 0).
 *  - a syscall name libseccomp does not know on any architecture is an
 *    error; a name it knows but this architecture lacks is skipped.
 *  - an unconditional rule and another rule with a different action for the
 *    same syscall are an error: libseccomp would silently keep only one.
 *  - unknown fields are errors (a misspelt "args" would otherwise allow the
 *    syscall with any arguments); "comment" is ignored.  */
#include "config.h"
#include "seccomp-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/json.h"
#include "../util/digest.h"
#include "../util/trust.h"
#include "../util/fs.h"
#include "../util/log.h"

/* ------------------------------------------------------------ cleaners */

static void
scmp_ctx_freep (scmp_filter_ctx *c)
{
  if (*c)
    seccomp_release (*c);
}
#define cleanup_scmp __attribute__ ((cleanup (scmp_ctx_freep)))

/* ------------------------------------------------------------ tables */

/* Architectures newer than some libseccomp releases: known by name (Docker
 * profiles list them), token 0 when this libseccomp lacks them, so they are
 * never native and never added. */
#ifdef SCMP_ARCH_RISCV64
#define CSR_ARCH_RISCV64 SCMP_ARCH_RISCV64
#else
#define CSR_ARCH_RISCV64 0
#endif
#ifdef SCMP_ARCH_LOONGARCH64
#define CSR_ARCH_LOONGARCH64 SCMP_ARCH_LOONGARCH64
#else
#define CSR_ARCH_LOONGARCH64 0
#endif
#ifdef SCMP_ARCH_M68K
#define CSR_ARCH_M68K SCMP_ARCH_M68K
#else
#define CSR_ARCH_M68K 0
#endif
#ifdef SCMP_ARCH_SH
#define CSR_ARCH_SH SCMP_ARCH_SH
#else
#define CSR_ARCH_SH 0
#endif
#ifdef SCMP_ARCH_SHEB
#define CSR_ARCH_SHEB SCMP_ARCH_SHEB
#else
#define CSR_ARCH_SHEB 0
#endif

struct arch_name
{
  const char *scmp;  /* OCI name */
  const char *alias; /* Docker's "includes.arches" spelling (GOARCH) */
  const char *alias2;
  uint32_t token;
};

static const struct arch_name arch_names[] = {
  { "SCMP_ARCH_X86", "x86", "386", SCMP_ARCH_X86 },
  { "SCMP_ARCH_X86_64", "amd64", "x86_64", SCMP_ARCH_X86_64 },
  { "SCMP_ARCH_X32", "x32", NULL, SCMP_ARCH_X32 },
  { "SCMP_ARCH_ARM", "arm", NULL, SCMP_ARCH_ARM },
  { "SCMP_ARCH_AARCH64", "arm64", "aarch64", SCMP_ARCH_AARCH64 },
  { "SCMP_ARCH_MIPS", "mips", NULL, SCMP_ARCH_MIPS },
  { "SCMP_ARCH_MIPS64", "mips64", NULL, SCMP_ARCH_MIPS64 },
  { "SCMP_ARCH_MIPS64N32", "mips64n32", NULL, SCMP_ARCH_MIPS64N32 },
  { "SCMP_ARCH_MIPSEL", "mipsel", "mipsle", SCMP_ARCH_MIPSEL },
  { "SCMP_ARCH_MIPSEL64", "mipsel64", "mips64le", SCMP_ARCH_MIPSEL64 },
  { "SCMP_ARCH_MIPSEL64N32", "mipsel64n32", "mips64n32le", SCMP_ARCH_MIPSEL64N32 },
  { "SCMP_ARCH_PPC", "ppc", NULL, SCMP_ARCH_PPC },
  { "SCMP_ARCH_PPC64", "ppc64", NULL, SCMP_ARCH_PPC64 },
  { "SCMP_ARCH_PPC64LE", "ppc64le", NULL, SCMP_ARCH_PPC64LE },
  { "SCMP_ARCH_S390", "s390", NULL, SCMP_ARCH_S390 },
  { "SCMP_ARCH_S390X", "s390x", NULL, SCMP_ARCH_S390X },
  { "SCMP_ARCH_PARISC", "parisc", NULL, SCMP_ARCH_PARISC },
  { "SCMP_ARCH_PARISC64", "parisc64", NULL, SCMP_ARCH_PARISC64 },
  { "SCMP_ARCH_RISCV64", "riscv64", NULL, CSR_ARCH_RISCV64 },
  { "SCMP_ARCH_LOONGARCH64", "loong64", "loongarch64", CSR_ARCH_LOONGARCH64 },
  { "SCMP_ARCH_M68K", "m68k", NULL, CSR_ARCH_M68K },
  { "SCMP_ARCH_SH", "sh", NULL, CSR_ARCH_SH },
  { "SCMP_ARCH_SHEB", "sheb", NULL, CSR_ARCH_SHEB },
};

/* Architectures whose system calls a process on NATIVE can make. */
static const struct
{
  uint32_t native, sub;
} sub_arches[] = {
  { SCMP_ARCH_X86_64, SCMP_ARCH_X86 },      { SCMP_ARCH_X86_64, SCMP_ARCH_X32 },
  { SCMP_ARCH_AARCH64, SCMP_ARCH_ARM },     { SCMP_ARCH_S390X, SCMP_ARCH_S390 },
  { SCMP_ARCH_MIPS64, SCMP_ARCH_MIPS },     { SCMP_ARCH_MIPS64, SCMP_ARCH_MIPS64N32 },
  { SCMP_ARCH_MIPSEL64, SCMP_ARCH_MIPSEL }, { SCMP_ARCH_MIPSEL64, SCMP_ARCH_MIPSEL64N32 },
  { SCMP_ARCH_PPC64, SCMP_ARCH_PPC },       { SCMP_ARCH_PARISC64, SCMP_ARCH_PARISC },
};

static const struct
{
  const char *name;
  uint32_t action;
} simple_actions[] = {
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW },
  { "SCMP_ACT_KILL", SCMP_ACT_KILL },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG },
};

static const struct
{
  const char *name;
  enum scmp_compare op;
} ops[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

/* seccomp(2) flags a profile may name.  csrun loads the program with
 * prctl(PR_SET_SECCOMP), which takes no flags: TSYNC is moot (the jail is
 * single-threaded when it loads the filter), LOG only changes auditing and
 * ignoring SPEC_ALLOW keeps the Spectre mitigations, the safe direction. */
static const char *const known_flags[] = {
  "SECCOMP_FILTER_FLAG_TSYNC",
  "SECCOMP_FILTER_FLAG_LOG",
  "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
  "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

/* ------------------------------------------------------------ JSON helpers */

/* Every key of OBJ must be in KNOWN (NULL-terminated). */
static int
check_keys (yajl_val obj, const char *const *known, const char *where, csr_error **err)
{
  for (size_t i = 0; i < obj->u.object.len; i++)
    {
      const char *key = obj->u.object.keys[i];
      bool ok = false;
      for (const char *const *k = known; *k && !ok; k++)
        ok = strcmp (*k, key) == 0;
      if (!ok)
        return csr_error_set (err, 0, "%s: unknown field \"%s\"", where, key);
    }
  return 0;
}

/* A JSON number that is a non-negative integer up to 2^64-1 (yajl's own
 * integer parsing stops at LLONG_MAX, so the original text is parsed). */
static int
get_u64 (yajl_val v, const char *where, uint64_t *out, csr_error **err)
{
  const char *s = YAJL_IS_NUMBER (v) ? v->u.number.r : NULL;
  if (s == NULL || *s < '0' || *s > '9' || strspn (s, "0123456789") != strlen (s))
    return csr_error_set (err, 0, "%s must be a non-negative integer", where);
  errno = 0;
  unsigned long long n = strtoull (s, NULL, 10);
  if (errno == ERANGE)
    return csr_error_set (err, 0, "%s is larger than 2^64-1", where);
  *out = n;
  return 0;
}

/* NULL or an array of strings. */
static int
check_str_array (yajl_val v, const char *where, csr_error **err)
{
  if (v == NULL || YAJL_IS_NULL (v))
    return 0;
  if (!YAJL_IS_ARRAY (v))
    return csr_error_set (err, 0, "%s must be an array of strings", where);
  for (size_t i = 0; i < v->u.array.len; i++)
    if (!YAJL_IS_STRING (v->u.array.values[i]))
      return csr_error_set (err, 0, "%s must be an array of strings", where);
  return 0;
}

static size_t
arr_len (yajl_val v)
{
  return v && YAJL_IS_ARRAY (v) ? v->u.array.len : 0;
}

/* ------------------------------------------------------------ names */

static const struct arch_name *
arch_lookup (const char *name)
{
  for (size_t i = 0; i < sizeof arch_names / sizeof arch_names[0]; i++)
    {
      const struct arch_name *a = &arch_names[i];
      if (strcmp (name, a->scmp) == 0 || strcmp (name, a->alias) == 0
          || (a->alias2 && strcmp (name, a->alias2) == 0))
        return a;
    }
  return NULL;
}

static bool
arch_runs_here (uint32_t native, uint32_t token)
{
  if (token == native)
    return true;
  for (size_t i = 0; i < sizeof sub_arches / sizeof sub_arches[0]; i++)
    if (sub_arches[i].native == native && sub_arches[i].sub == token)
      return true;
  return false;
}

/* ACTION_NAME + errnoRet (HAS_RET) → a libseccomp action. */
static int
parse_action (const char *name, bool has_ret, uint64_t ret, const char *where, uint32_t *out,
              csr_error **err)
{
  if (strcmp (name, "SCMP_ACT_ERRNO") == 0)
    {
      if (!has_ret)
        ret = EPERM;
      if (ret > 4095)
        return csr_error_set (err, 0, "%s: errno %llu is out of range (0-4095)", where,
                              (unsigned long long)ret);
      *out = SCMP_ACT_ERRNO ((uint16_t)ret);
      return 0;
    }
  if (has_ret)
    csr_debug ("seccomp: %s: errnoRet ignored with %s", where, name);
  for (size_t i = 0; i < sizeof simple_actions / sizeof simple_actions[0]; i++)
    if (strcmp (name, simple_actions[i].name) == 0)
      {
        *out = simple_actions[i].action;
        return 0;
      }
  if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    {
      *out = SCMP_ACT_NOTIFY; /* the caller checks that a listener takes it */
      return 0;
    }
  if (strcmp (name, "SCMP_ACT_TRACE") == 0)
    return csr_error_set (err, 0, "%s: %s is not supported (nothing traces the jail)", where, name);
  return csr_error_set (err, 0, "%s: unknown action \"%s\"", where, name);
}

static const char *
action_name (uint32_t action, char *buf, size_t size)
{
  if (action == SCMP_ACT_NOTIFY)
    return "SCMP_ACT_NOTIFY";
  if ((action & 0xffff0000u) == SCMP_ACT_ERRNO (0))
    {
      snprintf (buf, size, "SCMP_ACT_ERRNO(%u)", action & 0xffffu);
      return buf;
    }
  for (size_t i = 0; i < sizeof simple_actions / sizeof simple_actions[0]; i++)
    if (simple_actions[i].action == action)
      return simple_actions[i].name;
  snprintf (buf, size, "0x%08x", action);
  return buf;
}

/* ------------------------------------------------------------ compiler state */

struct added
{
  int nr;
  uint32_t action;
  bool conditional;
  size_t entry;
};

struct compiler
{
  scmp_filter_ctx ctx;
  uint32_t native;
  uint32_t def_action;
  bool extra_arches; /* the filter holds arches besides the native one */
  bool lenient;      /* conflicting rules: the first wins (OCI configs) */
  bool listener;     /* listenerPath is set: SCMP_ACT_NOTIFY may be used */
  /* The filter's architectures and the largest syscall number the profile
   * names on each (-1: none): the ENOSYS stub's bounds. */
  uint32_t arches[8];
  long max_nr[8];
  size_t n_arches;
  unsigned kernel_major, kernel_minor;
  struct added *added;
  size_t n_added, cap_added;
};

/* Refuse rules libseccomp would silently drop: an unconditional rule next to
 * any rule with another action for the same syscall. */
static int
record_rule (struct compiler *c, const char *name, int nr, uint32_t action, bool conditional,
             size_t entry, csr_error **err)
{
  for (size_t i = 0; i < c->n_added; i++)
    {
      const struct added *a = &c->added[i];
      if (a->nr != nr || a->action == action || (a->conditional && conditional))
        continue;
      char b1[32], b2[32];
      if (c->lenient)
        {
          /* OCI configs from podman and Docker hold such pairs: the first wins. */
          csr_debug ("seccomp: syscalls[%zu]: %s: %s ignored, syscalls[%zu] already has %s", entry,
                     name, action_name (action, b1, sizeof b1), a->entry,
                     action_name (a->action, b2, sizeof b2));
          return 1;
        }
      return csr_error_set (err, 0,
                            "syscalls[%zu]: %s: %s conflicts with %s in syscalls[%zu] (one "
                            "of them has no args: libseccomp would keep only one)",
                            entry, name, action_name (action, b1, sizeof b1),
                            action_name (a->action, b2, sizeof b2), a->entry);
    }
  if (c->n_added == c->cap_added)
    {
      size_t ncap = c->cap_added ? c->cap_added * 2 : 256;
      struct added *n = realloc (c->added, ncap * sizeof *n);
      if (n == NULL)
        return csr_error_errno (err, "seccomp: out of memory");
      c->added = n;
      c->cap_added = ncap;
    }
  c->added[c->n_added++] = (struct added){ nr, action, conditional, entry };
  return 0;
}

/* ------------------------------------------------------------ includes / excludes */

static int
parse_kernel_version (const char *s, unsigned *major, unsigned *minor)
{
  char *end;
  unsigned long ma = strtoul (s, &end, 10);
  if (end == s || *end != '.')
    return -1;
  const char *m = end + 1;
  unsigned long mi = strtoul (m, &end, 10);
  if (end == m || ma > UINT_MAX || mi > UINT_MAX)
    return -1;
  *major = (unsigned)ma;
  *minor = (unsigned)mi;
  return 0;
}

static bool
native_in (const struct compiler *c, yajl_val arches)
{
  for (size_t i = 0; i < arr_len (arches); i++)
    {
      const struct arch_name *a = arch_lookup (arches->u.array.values[i]->u.string);
      if (a && a->token == c->native)
        return true;
    }
  return false;
}

/* Docker's conditions, for a jail without capabilities. */
static int
entry_applies (const struct compiler *c, yajl_val entry, const char *where, bool *applies,
               csr_error **err)
{
  static const char *const inc_keys[] = { "arches", "caps", "minKernel", "comment", NULL };
  static const char *const exc_keys[] = { "arches", "caps", "comment", NULL };
  char w[96];
  *applies = true;
  for (int pass = 0; pass < 2; pass++)
    {
      const char *key = pass == 0 ? "includes" : "excludes";
      yajl_val cond = csr_json_get (entry, key);
      if (cond == NULL || YAJL_IS_NULL (cond))
        continue;
      snprintf (w, sizeof w, "%s.%s", where, key);
      if (!YAJL_IS_OBJECT (cond))
        return csr_error_set (err, 0, "%s must be an object", w);
      if (check_keys (cond, pass == 0 ? inc_keys : exc_keys, w, err) < 0)
        return -1;
      yajl_val arches = csr_json_get (cond, "arches"), caps = csr_json_get (cond, "caps");
      snprintf (w, sizeof w, "%s.%s.arches", where, key);
      if (check_str_array (arches, w, err) < 0)
        return -1;
      for (size_t i = 0; i < arr_len (arches); i++)
        if (arch_lookup (arches->u.array.values[i]->u.string) == NULL)
          return csr_error_set (err, 0, "%s: unknown architecture \"%s\"", w,
                                arches->u.array.values[i]->u.string);
      snprintf (w, sizeof w, "%s.%s.caps", where, key);
      if (check_str_array (caps, w, err) < 0)
        return -1;
      if (pass == 0)
        {
          if (arr_len (arches) > 0 && !native_in (c, arches))
            *applies = false;
          if (arr_len (caps) > 0) /* the jail holds no capabilities */
            *applies = false;
          yajl_val mk = csr_json_get (cond, "minKernel");
          if (mk && !YAJL_IS_NULL (mk))
            {
              unsigned ma, mi;
              if (csr_json_str (mk) == NULL || parse_kernel_version (mk->u.string, &ma, &mi) < 0)
                return csr_error_set (err, 0, "%s.includes.minKernel must be a string like \"4.8\"",
                                      where);
              if (c->kernel_major < ma || (c->kernel_major == ma && c->kernel_minor < mi))
                *applies = false;
            }
        }
      else if (arr_len (arches) > 0 && native_in (c, arches))
        *applies = false;
    }
  return 0;
}

/* ------------------------------------------------------------ one syscalls[] entry */

/* *REPEATED: some argument is compared more than once (see the header). */
static int
parse_args (yajl_val args, const char *where, struct scmp_arg_cmp *out, unsigned *n, bool *repeated,
            csr_error **err)
{
  static const char *const arg_keys[] = { "index", "value", "valueTwo", "op", "comment", NULL };
  char w[128];
  bool seen[6] = { false };
  *n = 0;
  *repeated = false;
  if (args == NULL || YAJL_IS_NULL (args))
    return 0;
  if (!YAJL_IS_ARRAY (args))
    return csr_error_set (err, 0, "%s.args must be an array", where);
  if (args->u.array.len > 6)
    return csr_error_set (err, 0, "%s.args: more than 6 comparisons", where);
  for (size_t i = 0; i < args->u.array.len; i++)
    {
      yajl_val a = args->u.array.values[i];
      snprintf (w, sizeof w, "%s.args[%zu]", where, i);
      if (!YAJL_IS_OBJECT (a))
        return csr_error_set (err, 0, "%s must be an object", w);
      if (check_keys (a, arg_keys, w, err) < 0)
        return -1;
      yajl_val vi = csr_json_get (a, "index"), vv = csr_json_get (a, "value");
      yajl_val v2 = csr_json_get (a, "valueTwo"), vo = csr_json_get (a, "op");
      uint64_t index, value, value2 = 0;
      char wf[160];
      if (vi == NULL || vv == NULL || vo == NULL)
        return csr_error_set (err, 0, "%s needs \"index\", \"value\" and \"op\"", w);
      snprintf (wf, sizeof wf, "%s.index", w);
      if (get_u64 (vi, wf, &index, err) < 0)
        return -1;
      if (index > 5)
        return csr_error_set (err, 0, "%s.index must be 0-5", w);
      snprintf (wf, sizeof wf, "%s.value", w);
      if (get_u64 (vv, wf, &value, err) < 0)
        return -1;
      snprintf (wf, sizeof wf, "%s.valueTwo", w);
      if (v2 && !YAJL_IS_NULL (v2) && get_u64 (v2, wf, &value2, err) < 0)
        return -1;
      const char *opname = csr_json_str (vo);
      if (opname == NULL)
        return csr_error_set (err, 0, "%s.op must be a string", w);
      size_t k;
      for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp (opname, ops[k].name) == 0)
          break;
      if (k == sizeof ops / sizeof ops[0])
        return csr_error_set (err, 0, "%s: unknown op \"%s\"", w, opname);
      if (seen[index])
        *repeated = true;
      seen[index] = true;
      /* For SCMP_CMP_MASKED_EQ, value is the mask and valueTwo the datum. */
      out[(*n)++] = (struct scmp_arg_cmp){
        .arg = (unsigned)index, .op = ops[k].op, .datum_a = value, .datum_b = value2
      };
    }
  return 0;
}

/* Add the rule for one name.  Unknown names are errors; names this
 * architecture lacks are skipped. */
static int
add_name (struct compiler *c, const char *name, size_t idx, uint32_t action,
          const struct scmp_arg_cmp *args, unsigned n_args, bool one_rule_each, csr_error **err)
{
  int nr = seccomp_syscall_resolve_name (name);
  if (nr == __NR_SCMP_ERROR)
    {
      for (size_t i = 0; i < sizeof arch_names / sizeof arch_names[0]; i++)
        if (arch_names[i].token != 0
            && seccomp_syscall_resolve_name_arch (arch_names[i].token, name) != __NR_SCMP_ERROR)
          {
            csr_debug ("seccomp: syscalls[%zu]: %s does not exist on this architecture", idx, name);
            return 0;
          }
      return csr_error_set (err, 0, "syscalls[%zu]: unknown syscall \"%s\"", idx, name);
    }
  if (nr < 0 && !c->extra_arches)
    {
      /* A pseudo number: known to libseccomp, absent here (e.g. socketcall). */
      csr_debug ("seccomp: syscalls[%zu]: %s does not exist on this architecture", idx, name);
      return 0;
    }
  /* The jail hands the listener to csrun with sendmsg(2) right after it
   * loaded the filter: notifying that call would wait for an agent that
   * can't have the listener yet. */
  if (action == SCMP_ACT_NOTIFY && strcmp (name, "sendmsg") == 0)
    return csr_error_set (err, 0,
                          "syscalls[%zu]: SCMP_ACT_NOTIFY cannot be used for sendmsg (csrun "
                          "passes the listener to the agent with it)",
                          idx);
  int rec = record_rule (c, name, nr, action, n_args > 0, idx, err);
  if (rec != 0)
    return rec < 0 ? -1 : 0;
  if (action == c->def_action)
    return 0; /* what happens anyway; libseccomp refuses it */
  if (!one_rule_each)
    {
      int r = seccomp_rule_add_array (c->ctx, action, nr, n_args, args);
      if (r < 0)
        return csr_error_set (err, -r, "syscalls[%zu]: cannot add the rule for %s", idx, name);
      return 0;
    }
  for (unsigned i = 0; i < n_args; i++)
    {
      int r = seccomp_rule_add_array (c->ctx, action, nr, 1, &args[i]);
      if (r < 0)
        return csr_error_set (err, -r, "syscalls[%zu]: cannot add the rule for %s (args[%u])", idx,
                              name, i);
    }
  return 0;
}

/* Every name a profile lists counts for the ENOSYS stub's bounds, whatever
 * its action and whether its entry applies here. */
static void
note_max_nr (struct compiler *c, const char *name)
{
  for (size_t i = 0; i < c->n_arches; i++)
    {
      int nr = seccomp_syscall_resolve_name_arch (c->arches[i], name);
      if (nr >= 0 && nr > c->max_nr[i])
        c->max_nr[i] = nr;
    }
}

static int
compile_entry (struct compiler *c, yajl_val entry, size_t idx, csr_error **err)
{
  static const char *const entry_keys[]
      = { "names", "name", "action", "errnoRet", "args", "comment", "includes", "excludes", NULL };
  char where[64], w[96];
  snprintf (where, sizeof where, "syscalls[%zu]", idx);
  if (!YAJL_IS_OBJECT (entry))
    return csr_error_set (err, 0, "%s must be an object", where);
  if (check_keys (entry, entry_keys, where, err) < 0)
    return -1;

  /* Validate everything before deciding whether the entry applies, so a
   * broken entry is an error on every host. */
  yajl_val names = csr_json_get (entry, "names"), name = csr_json_get (entry, "name");
  snprintf (w, sizeof w, "%s.names", where);
  if (names && (check_str_array (names, w, err) < 0 || YAJL_IS_NULL (names)))
    return csr_error_set (err, 0, "%s must be an array of strings", w);
  snprintf (w, sizeof w, "%s.name", where);
  if (name && csr_json_str (name) == NULL)
    return csr_error_set (err, 0, "%s must be a string", w);
  if (arr_len (names) == 0 && name == NULL)
    return csr_error_set (err, 0, "%s has no syscall names", where);

  yajl_val act = csr_json_get (entry, "action"), ret = csr_json_get (entry, "errnoRet");
  if (act == NULL)
    return csr_error_set (err, 0, "%s.action is missing", where);
  if (csr_json_str (act) == NULL)
    return csr_error_set (err, 0, "%s.action must be a string", where);
  uint64_t errno_ret = 0;
  bool has_ret = ret && !YAJL_IS_NULL (ret);
  snprintf (w, sizeof w, "%s.errnoRet", where);
  if (has_ret && get_u64 (ret, w, &errno_ret, err) < 0)
    return -1;
  uint32_t action;
  if (parse_action (act->u.string, has_ret, errno_ret, where, &action, err) < 0)
    return -1;
  if (action == SCMP_ACT_NOTIFY && !c->listener)
    return csr_error_set (err, 0, "%s: SCMP_ACT_NOTIFY needs a listenerPath", where);

  struct scmp_arg_cmp args[6];
  unsigned n_args;
  bool repeated;
  if (parse_args (csr_json_get (entry, "args"), where, args, &n_args, &repeated, err) < 0)
    return -1;
  if (name)
    note_max_nr (c, name->u.string);
  for (size_t i = 0; i < arr_len (names); i++)
    note_max_nr (c, names->u.array.values[i]->u.string);
  bool applies;
  if (entry_applies (c, entry, where, &applies, err) < 0)
    return -1;
  if (!applies)
    {
      csr_debug ("seccomp: %s does not apply here (includes/excludes)", where);
      return 0;
    }

  if (repeated)
    csr_debug ("seccomp: %s compares an argument more than once: one rule per comparison (OR)",
               where);
  if (name && add_name (c, name->u.string, idx, action, args, n_args, repeated, err) < 0)
    return -1;
  for (size_t i = 0; i < arr_len (names); i++)
    if (add_name (c, names->u.array.values[i]->u.string, idx, action, args, n_args, repeated, err)
        < 0)
      return -1;
  return 0;
}

/* ------------------------------------------------------------ the profile */

static void
note_arch (struct compiler *c, uint32_t token)
{
  for (size_t i = 0; i < c->n_arches; i++)
    if (c->arches[i] == token)
      return;
  if (c->n_arches < sizeof c->arches / sizeof c->arches[0])
    {
      c->arches[c->n_arches] = token;
      c->max_nr[c->n_arches++] = -1;
    }
}

static int
add_arch (struct compiler *c, const char *name, csr_error **err)
{
  const struct arch_name *a = arch_lookup (name);
  if (a == NULL)
    return csr_error_set (err, 0, "unknown architecture \"%s\"", name);
  if (a->token == c->native)
    return 0;
  if (!arch_runs_here (c->native, a->token))
    {
      csr_debug ("seccomp: architecture %s cannot run here: skipped", name);
      return 0;
    }
  int r = seccomp_arch_add (c->ctx, a->token);
  if (r < 0 && r != -EEXIST)
    return csr_error_set (err, -r, "cannot add architecture %s", name);
  c->extra_arches = true;
  note_arch (c, a->token);
  return 0;
}

static int
add_arches (struct compiler *c, yajl_val root, csr_error **err)
{
  yajl_val arches = csr_json_get (root, "architectures");
  if (check_str_array (arches, "architectures", err) < 0)
    return -1;
  for (size_t i = 0; i < arr_len (arches); i++)
    if (add_arch (c, arches->u.array.values[i]->u.string, err) < 0)
      return -1;

  /* Docker's archMap: [{architecture, subArchitectures}], the entry of the
   * native architecture applies. */
  yajl_val map = csr_json_get (root, "archMap");
  if (map == NULL || YAJL_IS_NULL (map))
    return 0;
  if (!YAJL_IS_ARRAY (map))
    return csr_error_set (err, 0, "archMap must be an array");
  for (size_t i = 0; i < map->u.array.len; i++)
    {
      yajl_val m = map->u.array.values[i];
      char w[64];
      snprintf (w, sizeof w, "archMap[%zu]", i);
      static const char *const keys[] = { "architecture", "subArchitectures", "comment", NULL };
      if (!YAJL_IS_OBJECT (m))
        return csr_error_set (err, 0, "%s must be an object", w);
      if (check_keys (m, keys, w, err) < 0)
        return -1;
      const char *arch = csr_json_str (csr_json_get (m, "architecture"));
      if (arch == NULL)
        return csr_error_set (err, 0, "%s.architecture must be a string", w);
      const struct arch_name *a = arch_lookup (arch);
      if (a == NULL)
        return csr_error_set (err, 0, "%s: unknown architecture \"%s\"", w, arch);
      yajl_val subs = csr_json_get (m, "subArchitectures");
      snprintf (w, sizeof w, "archMap[%zu].subArchitectures", i);
      if (check_str_array (subs, w, err) < 0)
        return -1;
      for (size_t j = 0; j < arr_len (subs); j++)
        {
          const char *s = subs->u.array.values[j]->u.string;
          if (arch_lookup (s) == NULL)
            return csr_error_set (err, 0, "%s: unknown architecture \"%s\"", w, s);
          if (a->token == c->native && add_arch (c, s, err) < 0)
            return -1;
        }
    }
  return 0;
}

static int
check_flags (yajl_val root, csr_error **err)
{
  yajl_val flags = csr_json_get (root, "flags");
  if (check_str_array (flags, "flags", err) < 0)
    return -1;
  for (size_t i = 0; i < arr_len (flags); i++)
    {
      const char *f = flags->u.array.values[i]->u.string;
      size_t k;
      for (k = 0; k < sizeof known_flags / sizeof known_flags[0]; k++)
        if (strcmp (f, known_flags[k]) == 0)
          break;
      if (k == sizeof known_flags / sizeof known_flags[0])
        return csr_error_set (err, 0, "flags: unknown flag \"%s\"", f);
      csr_debug ("seccomp: flag %s ignored (the filter is loaded with prctl)", f);
    }
  return 0;
}

/* yajl's message on one line. */
static void
squeeze_spaces (char *s)
{
  char *o = s;
  bool space = false;
  for (char *p = s; *p; p++)
    {
      bool is_space = *p == ' ' || *p == '\n' || *p == '\t' || *p == '\r';
      if (is_space && (space || o == s))
        continue;
      *o++ = is_space ? ' ' : *p;
      space = is_space;
    }
  while (o > s && o[-1] == ' ')
    o--;
  *o = '\0';
}

static int
parse_profile (const char *json, size_t len, yajl_val *out, csr_error **err)
{
  if (memchr (json, '\0', len) != NULL)
    return csr_error_set (err, 0, "malformed JSON: the profile contains a NUL byte");
  cleanup_free char *text = strndup (json, len);
  if (text == NULL)
    return csr_error_errno (err, "seccomp: out of memory");
  char msg[1024] = "";
  yajl_val root = yajl_tree_parse (text, msg, sizeof msg);
  if (root == NULL)
    {
      squeeze_spaces (msg);
      return csr_error_set (err, 0, "malformed JSON: %s", *msg ? msg : "parse error");
    }
  if (!YAJL_IS_OBJECT (root))
    {
      yajl_tree_free (root);
      return csr_error_set (err, 0, "the profile must be a JSON object");
    }
  *out = root;
  return 0;
}

static int
build_filter (struct compiler *c, yajl_val root, csr_error **err)
{
  static const char *const top_keys[]
      = { "defaultAction", "defaultErrnoRet", "architectures", "archMap",          "syscalls",
          "flags",         "comment",         "listenerPath",  "listenerMetadata", NULL };
  if (check_keys (root, top_keys, "profile", err) < 0)
    return -1;
  /* listenerPath (OCI configs only): the jail sends the filter's listener
   * to the agent there (csr_seccomp_listener_send); "" is no listener. */
  yajl_val lp = csr_json_get (root, "listenerPath"), lm = csr_json_get (root, "listenerMetadata");
  if (lp && !YAJL_IS_NULL (lp) && csr_json_str (lp) == NULL)
    return csr_error_set (err, 0, "listenerPath must be a string");
  if (lm && !YAJL_IS_NULL (lm) && csr_json_str (lm) == NULL)
    return csr_error_set (err, 0, "listenerMetadata must be a string");
  c->listener = csr_json_str (lp) && *lp->u.string != '\0';
  if (c->listener && !c->lenient)
    return csr_error_set (err, 0, "listenerPath is only for OCI configs");

  yajl_val da = csr_json_get (root, "defaultAction"), dr = csr_json_get (root, "defaultErrnoRet");
  if (da == NULL)
    return csr_error_set (err, 0, "defaultAction is missing");
  if (csr_json_str (da) == NULL)
    return csr_error_set (err, 0, "defaultAction must be a string");
  uint64_t def_ret = 0;
  bool has_ret = dr && !YAJL_IS_NULL (dr);
  if (has_ret && get_u64 (dr, "defaultErrnoRet", &def_ret, err) < 0)
    return -1;
  if (parse_action (da->u.string, has_ret, def_ret, "defaultAction", &c->def_action, err) < 0)
    return -1;
  if (c->def_action == SCMP_ACT_NOTIFY)
    return csr_error_set (err, 0,
                          "defaultAction SCMP_ACT_NOTIFY is not supported (every call the jail "
                          "makes after loading the filter would wait for the agent)");
  if (check_flags (root, err) < 0)
    return -1;
  yajl_val syscalls = csr_json_get (root, "syscalls");
  if (syscalls && !YAJL_IS_NULL (syscalls) && !YAJL_IS_ARRAY (syscalls))
    return csr_error_set (err, 0, "syscalls must be an array");

  c->ctx = seccomp_init (c->def_action);
  if (c->ctx == NULL)
    return csr_error_set (err, 0, "cannot create a filter with defaultAction %s", da->u.string);
  /* Foreign-architecture syscalls (i386 int 0x80, x32) kill the process. */
  int r = seccomp_attr_set (c->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (r < 0)
    return csr_error_set (err, -r, "seccomp: cannot set the bad-architecture action");
  /* The jail sets no_new_privs itself; the program is exported, not loaded. */
  r = seccomp_attr_set (c->ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return csr_error_set (err, -r, "seccomp: cannot clear the no_new_privs attribute");
  /* A binary search over the syscall numbers instead of a linear scan. */
  r = seccomp_attr_set (c->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (r < 0)
    csr_debug ("seccomp: binary-tree optimization unavailable: %s", strerror (-r));

  note_arch (c, c->native);
  if (add_arches (c, root, err) < 0)
    return -1;
  for (size_t i = 0; i < arr_len (syscalls); i++)
    if (compile_entry (c, syscalls->u.array.values[i], i, err) < 0)
      return -1;
  return 0;
}

/* ------------------------------------------------------------ BPF */

/* Sanity of a program from libseccomp or from the cache: whole
 * instructions, within the kernel's limit, starting with the load of
 * seccomp_data.arch (offset 4) and ending with a return. */
int
csr_seccomp_check_bpf (const void *buf, size_t len, const char *what, csr_error **err)
{
  const struct sock_filter *f = buf;
  if (len == 0 || len % sizeof (struct sock_filter) != 0 || len > BPF_BYTES_MAX)
    return csr_error_set (err, 0, "%s: %zu bytes is not a seccomp program", what, len);
  size_t n = len / sizeof (struct sock_filter);
  if (f[0].code != (BPF_LD | BPF_W | BPF_ABS) || f[0].k != 4
      || BPF_CLASS (f[n - 1].code) != BPF_RET)
    return csr_error_set (err, 0, "%s: not a program exported by libseccomp", what);
  return 0;
}

static int
export_bpf (scmp_filter_ctx ctx, char **out, size_t *len, csr_error **err)
{
  cleanup_close int fd = memfd_create ("csrun-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    {
      cleanup_file FILE *tmp = tmpfile ();
      if (tmp == NULL)
        return csr_error_errno (err, "seccomp: cannot create a memfd or a temporary file");
      fd = dup (fileno (tmp));
      if (fd < 0)
        return csr_error_errno (err, "seccomp: dup");
    }
  int r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return csr_error_set (err, -r, "seccomp: cannot export the BPF program");
  if (lseek (fd, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "seccomp: lseek");
  if (csr_read_fd (fd, BPF_BYTES_MAX, out, len, err) < 0)
    return csr_error_wrap (err, "seccomp: the exported program");
  return 0;
}

/* runc's answer to profiles older than the kernel and the C library: a
 * system call numbered above every one the profile names (on that
 * architecture) is one the profile's author could not know, and returns
 * ENOSYS instead of the default action, so that the library falls back to an
 * older call (clone3 -> clone) as it would on an older kernel.  (The runtime
 * spec is silent; crun 1.8 does not do it.)  OCI profiles whose default
 * action is not an allow get this stub in front of libseccomp's program:
 *
 *   ld arch; per architecture: jeq ARCH ? (ld nr; [x86_64: jset X32_BIT ->
 *   the x32 bound]; jgt MAX -> ENOSYS : MAIN) : next; ...; ENOSYS: ret
 *   errno(ENOSYS); MAIN: libseccomp's program (which starts with ld arch). */
#define X32_SYSCALL_BIT 0x40000000u
static int
add_enosys_stub (const struct compiler *c, char **bpf, size_t *bpf_len, csr_error **err)
{
  struct sock_filter stub[64];
  size_t n = 0;
  long x32_max = -1;
  for (size_t i = 0; i < c->n_arches; i++)
    if (c->arches[i] == SCMP_ARCH_X32)
      x32_max = c->max_nr[i];
  /* Each block's jumps to ENOSYS and MAIN are fixed up at the end. */
  size_t out_jumps[32], n_out = 0, block_start[8], n_blocks = 0;
  stub[n++] = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 4);
  for (size_t i = 0; i < c->n_arches; i++)
    {
      uint32_t a = c->arches[i];
      if (a == SCMP_ARCH_X32 || c->max_nr[i] < 0 || n > 48)
        continue; /* x32 calls come as x86_64 ones with X32_SYSCALL_BIT */
      block_start[n_blocks++] = n;
      stub[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, a, 0, 0);
      stub[n++] = (struct sock_filter)BPF_STMT (BPF_LD | BPF_W | BPF_ABS, 0);
      if (a == SCMP_ARCH_X86_64)
        {
          /* jt: over the x86_64 bound to the x32 one (or to MAIN) */
          stub[n++]
              = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 1, 0);
          out_jumps[n_out++] = n;
          stub[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K,
                                                    (uint32_t)c->max_nr[i], 0, 0);
          out_jumps[n_out++] = n;
          stub[n++] = (struct sock_filter)BPF_JUMP (
              BPF_JMP | BPF_JGT | BPF_K, x32_max >= 0 ? (uint32_t)x32_max : UINT32_MAX, 0, 0);
        }
      else
        {
          out_jumps[n_out++] = n;
          stub[n++] = (struct sock_filter)BPF_JUMP (BPF_JMP | BPF_JGT | BPF_K,
                                                    (uint32_t)c->max_nr[i], 0, 0);
        }
    }
  if (n_blocks == 0)
    return 0;
  size_t enosys = n, main = n + 1;
  stub[n++] = (struct sock_filter)BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
  /* A block's jeq, when the arch differs: the next block, or MAIN. */
  for (size_t b = 0; b < n_blocks; b++)
    {
      size_t at = block_start[b], next = b + 1 < n_blocks ? block_start[b + 1] : main;
      stub[at].jf = (uint8_t)(next - at - 1);
    }
  for (size_t j = 0; j < n_out; j++)
    {
      size_t at = out_jumps[j];
      stub[at].jt = (uint8_t)(enosys - at - 1);
      stub[at].jf = (uint8_t)(main - at - 1);
    }
  size_t add = n * sizeof stub[0];
  if (*bpf_len + add > BPF_BYTES_MAX)
    return csr_error_set (err, E2BIG, "seccomp: the program is too large");
  char *nb = malloc (*bpf_len + add);
  if (nb == NULL)
    return csr_error_errno (err, "seccomp: out of memory");
  memcpy (nb, stub, add);
  memcpy (nb + add, *bpf, *bpf_len);
  free (*bpf);
  *bpf = nb;
  *bpf_len += add;
  return 0;
}

/* Takes ownership of BPF. */
int
csr_seccomp_make_result (char *bpf, size_t len, const char *digest, struct csr_seccomp **out,
                         csr_error **err)
{
  cleanup_free char *owned = bpf;
  struct csr_seccomp *s = calloc (1, sizeof *s);
  if (s == NULL)
    return csr_error_errno (err, "seccomp: out of memory");
  s->bpf = steal_pointer (&owned);
  s->bpf_len = len;
  s->prog.len = (unsigned short)(len / sizeof (struct sock_filter));
  s->prog.filter = s->bpf;
  memcpy (s->digest, digest, sizeof s->digest);
  *out = s;
  return 0;
}

int
csr_seccomp_compile_to_bpf (const char *json, size_t len, bool lenient, char **bpf, size_t *bpf_len,
                            csr_error **err)
{
  cleanup_yajl_val yajl_val root = NULL;
  if (parse_profile (json, len, &root, err) < 0)
    return -1;
  struct compiler c = { .native = seccomp_arch_native (), .lenient = lenient };
  struct utsname u;
  if (uname (&u) == 0 && parse_kernel_version (u.release, &c.kernel_major, &c.kernel_minor) < 0)
    c.kernel_major = c.kernel_minor = 0;
  int r = build_filter (&c, root, err);
  free (c.added);
  cleanup_scmp scmp_filter_ctx ctx = c.ctx;
  if (r < 0)
    return -1;
  if (export_bpf (ctx, bpf, bpf_len, err) < 0)
    return -1;
  if (lenient && c.def_action != SCMP_ACT_ALLOW && c.def_action != SCMP_ACT_LOG
      && add_enosys_stub (&c, bpf, bpf_len, err) < 0)
    {
      free (*bpf);
      *bpf = NULL;
      return -1;
    }
  if (csr_seccomp_check_bpf (*bpf, *bpf_len, "seccomp", err) < 0)
    {
      free (*bpf);
      *bpf = NULL;
      return csr_error_wrap (err, "the filter is too large or malformed");
    }
  return 0;
}

static int
compile (const char *json, size_t len, bool lenient, struct csr_seccomp **out, csr_error **err)
{
  char digest[CSR_SHA256_HEX_LEN + 1];
  if (csr_sha256_buf (json, len, digest, err) < 0)
    return -1;
  char *bpf = NULL;
  size_t bpf_len = 0;
  if (csr_seccomp_compile_to_bpf (json, len, lenient, &bpf, &bpf_len, err) < 0)
    return -1;
  return csr_seccomp_make_result (bpf, bpf_len, digest, out, err);
}

int
csr_seccomp_compile (const char *json, size_t len, struct csr_seccomp **out, csr_error **err)
{
  return compile (json, len, false, out, err);
}

int
csr_seccomp_compile_oci (const char *json, size_t len, struct csr_seccomp **out, csr_error **err)
{
  return compile (json, len, true, out, err);
}

void
csr_seccomp_free (struct csr_seccomp *s)
{
  if (s == NULL)
    return;
  free (s->bpf);
  free (s);
}
