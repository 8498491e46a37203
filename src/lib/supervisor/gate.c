/* csrun — the AST gate's C side: gate.conf, --allow, the policy JSON for
 * policies/gate.py and the verdict it writes on fd 3. */
#include "config.h"
#include "gate.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "../util/cleanup.h"
#include "../util/json.h"
#include "../util/fs.h"
#include "../util/utf8.h"

/* A gate.conf larger than this is surely not a policy. */
#define GATE_CONF_MAX (1024 * 1024)

static const char *const kind_names[] = {
  [CSR_RULE_SYNTAX] = "syntax", [CSR_RULE_BROAD_EXCEPT] = "except", [CSR_RULE_CALL] = "call",
  [CSR_RULE_LIMIT] = "limit",   [CSR_RULE_UNDEFINED] = "undefined",
};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

/* ---------------------------------------------------------------- policy */

static void
rule_release (struct csr_rule *r)
{
  free (r->id);
  for (size_t i = 0; i < r->n_args; i++)
    free (r->args[i]);
  free (r->args);
  free (r->message);
  memset (r, 0, sizeof *r);
}

void
csr_gate_policy_release (struct csr_gate_policy *p)
{
  if (p == NULL)
    return;
  for (size_t i = 0; i < p->n_rules; i++)
    rule_release (&p->rules[i]);
  free (p->rules);
  p->rules = NULL;
  p->n_rules = 0;
}

static bool
is_alpha (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* A rule id: a letter, then letters, digits, '-', '_' or '.'. */
static bool
valid_id (const char *s)
{
  if (!is_alpha (*s) || strlen (s) > 64)
    return false;
  for (; *s; s++)
    if (!is_alpha (*s) && !is_digit (*s) && *s != '-' && *s != '_' && *s != '.')
      return false;
  return true;
}

/* A dotted Python name (os.path.join); with STAR, the last component may
 * end in '*' and be only "*" (os.exec*, subprocess.*).  ASCII identifiers
 * only: every name a policy needs is one. */
static bool
valid_target (const char *s, bool star)
{
  bool start = true;
  for (; *s; s++)
    {
      char c = *s;
      if (c == '*' && star && s[1] == '\0')
        return true;
      if (c == '.' && !start)
        start = true;
      else if (is_alpha (c) || c == '_' || (!start && is_digit (c)))
        start = false;
      else
        return false;
    }
  return !start;
}

/* Split a logical line into words (in place). */
static size_t
split_words (char *line, char **words, size_t max)
{
  size_t n = 0;
  char *save = NULL;
  for (char *w = strtok_r (line, " \t\r\f\v", &save); w && n < max;
       w = strtok_r (NULL, " \t\r\f\v", &save))
    words[n++] = w;
  return n;
}

static int
kind_from_name (const char *s)
{
  for (size_t k = 0; k < N_KINDS; k++)
    if (strcmp (s, kind_names[k]) == 0)
      return (int)k;
  return -1;
}

/* Check the arguments of a rule of kind KIND; the error names the line. */
static int
check_args (const char *name, int lineno, const char *id, enum csr_rule_kind kind, char **args,
            size_t n, csr_error **err)
{
  switch (kind)
    {
    case CSR_RULE_SYNTAX:
    case CSR_RULE_UNDEFINED:
      if (n > 0)
        return csr_error_set (err, 0, "%s line %d: rule '%s' (%s) takes no arguments, got '%s'",
                              name, lineno, id, kind_names[kind], args[0]);
      return 0;
    case CSR_RULE_BROAD_EXCEPT:
    case CSR_RULE_CALL:
      if (n == 0)
        return csr_error_set (err, 0, "%s line %d: rule '%s' (%s) lists no names", name, lineno, id,
                              kind_names[kind]);
      for (size_t i = 0; i < n; i++)
        if (!valid_target (args[i], kind == CSR_RULE_CALL))
          return csr_error_set (err, 0, "%s line %d: '%s' is not a %s", name, lineno, args[i],
                                kind == CSR_RULE_CALL ? "dotted name (with an optional '*' suffix)"
                                                      : "dotted class name");
      return 0;
    case CSR_RULE_LIMIT:
      {
        if (strcmp (id, "max-source-bytes") != 0 && strcmp (id, "max-ast-depth") != 0)
          return csr_error_set (
              err, 0, "%s line %d: unknown limit '%s' (expected max-source-bytes or max-ast-depth)",
              name, lineno, id);
        if (n != 1)
          return csr_error_set (err, 0, "%s line %d: limit '%s' takes one number, got %zu words",
                                name, lineno, id, n);
        char *end = NULL;
        errno = 0;
        long long v = strtoll (args[0], &end, 10);
        if (!is_digit (args[0][0]) || *end != '\0' || errno != 0 || v < 1 || v > INT_MAX)
          return csr_error_set (err, 0, "%s line %d: limit '%s': '%s' is not a number from 1 to %d",
                                name, lineno, id, args[0], INT_MAX);
        return 0;
      }
    }
  return csr_error_set (err, 0, "%s line %d: bad kind", name, lineno);
}

static char *
join_words (char **words, size_t n)
{
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += strlen (words[i]) + 1;
  char *s = malloc (len + 1);
  if (s == NULL)
    return NULL;
  char *o = s;
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        *o++ = ' ';
      size_t l = strlen (words[i]);
      memcpy (o, words[i], l);
      o += l;
    }
  *o = '\0';
  return s;
}

/* Parse one logical line (already joined) into P. */
static int
parse_rule (const char *name, int lineno, char *line, struct csr_gate_policy *p, csr_error **err)
{
  size_t max_words = strlen (line) / 2 + 2;
  cleanup_free char **words = calloc (max_words, sizeof *words);
  if (words == NULL)
    return csr_error_errno (err, "%s line %d", name, lineno);
  size_t n = split_words (line, words, max_words);
  if (n == 0)
    return 0;
  const char *id = words[0];
  if (!valid_id (id))
    return csr_error_set (err, 0,
                          "%s line %d: '%s' is not a rule id (a letter, then letters, digits, "
                          "'-', '_' or '.')",
                          name, lineno, id);
  if (n < 2 || strcmp (words[1], "--") == 0)
    return csr_error_set (err, 0, "%s line %d: rule '%s' has no kind", name, lineno, id);
  int kind = kind_from_name (words[1]);
  if (kind < 0)
    return csr_error_set (
        err, 0, "%s line %d: unknown kind '%s' (expected syntax, except, call, limit or undefined)",
        name, lineno, words[1]);
  for (size_t i = 0; i < p->n_rules; i++)
    if (strcmp (p->rules[i].id, id) == 0)
      return csr_error_set (err, 0, "%s line %d: rule '%s' is defined twice", name, lineno, id);
  size_t n_args = 0;
  while (2 + n_args < n && strcmp (words[2 + n_args], "--") != 0)
    n_args++;
  char **args = words + 2;
  if (check_args (name, lineno, id, (enum csr_rule_kind)kind, args, n_args, err) < 0)
    return -1;

  struct csr_rule *rules = realloc (p->rules, (p->n_rules + 1) * sizeof *rules);
  if (rules == NULL)
    return csr_error_errno (err, "%s line %d", name, lineno);
  p->rules = rules;
  struct csr_rule *r = &p->rules[p->n_rules];
  memset (r, 0, sizeof *r);
  r->kind = (enum csr_rule_kind)kind;
  r->enabled = true;
  r->id = strdup (id);
  r->args = calloc (n_args ? n_args : 1, sizeof *r->args);
  size_t msg_at = 2 + n_args + 1;
  if (msg_at < n)
    r->message = join_words (words + msg_at, n - msg_at);
  bool oom = r->id == NULL || r->args == NULL || (msg_at < n && r->message == NULL);
  for (size_t i = 0; !oom && i < n_args; i++)
    {
      r->args[i] = strdup (args[i]);
      oom = r->args[i] == NULL;
      r->n_args = i + 1;
    }
  if (oom)
    {
      rule_release (r);
      return csr_error_errno (err, "%s line %d", name, lineno);
    }
  p->n_rules++;
  return 0;
}

/* The line at TEXT[*pos..]: its length without the newline; advances *pos. */
static size_t
next_line (const char *text, size_t len, size_t *pos, const char **start)
{
  *start = text + *pos;
  const char *nl = memchr (*start, '\n', len - *pos);
  size_t l = nl ? (size_t)(nl - *start) : len - *pos;
  *pos += l + (nl ? 1 : 0);
  return l;
}

static bool
is_comment (const char *s, size_t l)
{
  size_t i = 0;
  while (i < l && (s[i] == ' ' || s[i] == '\t'))
    i++;
  return i < l && s[i] == '#';
}

static int
policy_parse (const char *name, const char *text, size_t len, struct csr_gate_policy *p,
              csr_error **err)
{
  memset (p, 0, sizeof *p);
  cleanup_free char *logical = malloc (len + 2);
  if (logical == NULL)
    return csr_error_errno (err, "%s", name);
  size_t pos = 0;
  int lineno = 0;
  while (pos < len)
    {
      /* Join the physical lines of one logical line: a trailing backslash
       * continues it; comment lines inside are skipped. */
      size_t used = 0;
      int first = 0;
      bool more = true;
      while (more && pos < len)
        {
          const char *s;
          size_t l = next_line (text, len, &pos, &s);
          lineno++;
          if (memchr (s, '\0', l) != NULL)
            {
              csr_gate_policy_release (p);
              return csr_error_set (err, 0, "%s line %d: contains a NUL byte", name, lineno);
            }
          if (!csr_utf8_valid (s, l))
            {
              csr_gate_policy_release (p);
              return csr_error_set (err, 0, "%s line %d: not valid UTF-8", name, lineno);
            }
          if (is_comment (s, l))
            continue;
          if (first == 0)
            first = lineno;
          while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
            l--;
          more = l > 0 && s[l - 1] == '\\';
          if (more)
            l--;
          memcpy (logical + used, s, l);
          used += l;
          logical[used++] = ' ';
        }
      logical[used] = '\0';
      if (parse_rule (name, first, logical, p, err) < 0)
        {
          csr_gate_policy_release (p);
          return -1;
        }
    }
  return 0;
}

int
csr_gate_policy_parse (const char *text, size_t len, struct csr_gate_policy *p, csr_error **err)
{
  return policy_parse ("gate.conf", text, len, p, err);
}

int
csr_gate_policy_load (const char *path, struct csr_gate_policy *p, csr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  memset (p, 0, sizeof *p);
  if (csr_read_file (path, GATE_CONF_MAX, &text, &len, err) < 0)
    return csr_error_wrap (err, "gate policy");
  return policy_parse (path, text, len, p, err);
}

/* "a, b, c" of the rule ids, or of the targets of every rule of KIND. */
static char *
list_names (const struct csr_gate_policy *p, int kind)
{
  size_t len = 1;
  for (size_t i = 0; i < p->n_rules; i++)
    {
      if (kind < 0)
        len += strlen (p->rules[i].id) + 2;
      else if ((int)p->rules[i].kind == kind)
        for (size_t j = 0; j < p->rules[i].n_args; j++)
          len += strlen (p->rules[i].args[j]) + 2;
    }
  char *s = malloc (len);
  if (s == NULL)
    return NULL;
  *s = '\0';
  for (size_t i = 0; i < p->n_rules; i++)
    {
      const struct csr_rule *r = &p->rules[i];
      if (kind < 0)
        strcat (strcat (s, *s ? ", " : ""), r->id);
      else if ((int)r->kind == kind)
        for (size_t j = 0; j < r->n_args; j++)
          strcat (strcat (s, *s ? ", " : ""), r->args[j]);
    }
  return s;
}

/* --allow call:NAME / except:NAME: drop NAME from every rule of KIND. */
static int
allow_target (struct csr_gate_policy *p, enum csr_rule_kind kind, const char *spec,
              const char *target, csr_error **err)
{
  size_t dropped = 0;
  for (size_t i = 0; i < p->n_rules; i++)
    {
      struct csr_rule *r = &p->rules[i];
      if (r->kind != kind)
        continue;
      size_t keep = 0;
      for (size_t j = 0; j < r->n_args; j++)
        {
          if (strcmp (r->args[j], target) == 0)
            {
              free (r->args[j]);
              dropped++;
            }
          else
            r->args[keep++] = r->args[j];
        }
      r->n_args = keep;
      if (keep == 0)
        r->enabled = false; /* nothing left to check */
    }
  if (dropped > 0)
    return 0;
  cleanup_free char *names = list_names (p, (int)kind);
  return csr_error_set (err, 0, "--allow %s: no %s rule lists '%s' (listed: %s)", spec,
                        kind_names[kind], target, names && *names ? names : "none");
}

int
csr_gate_policy_allow (struct csr_gate_policy *p, const char *rule, csr_error **err)
{
  if (rule == NULL || *rule == '\0')
    return csr_error_set (err, 0, "--allow: empty rule");
  const char *colon = strchr (rule, ':');
  if (colon != NULL)
    {
      size_t kl = (size_t)(colon - rule);
      if (kl == 4 && strncmp (rule, "call", 4) == 0)
        return allow_target (p, CSR_RULE_CALL, rule, colon + 1, err);
      if (kl == 6 && strncmp (rule, "except", 6) == 0)
        return allow_target (p, CSR_RULE_BROAD_EXCEPT, rule, colon + 1, err);
      return csr_error_set (
          err, 0, "--allow %s: unknown form (expected RULE-ID, call:NAME or except:NAME)", rule);
    }
  for (size_t i = 0; i < p->n_rules; i++)
    {
      struct csr_rule *r = &p->rules[i];
      if (strcmp (r->id, rule) != 0)
        continue;
      if (r->kind == CSR_RULE_SYNTAX)
        return csr_error_set (err, 0,
                              "--allow %s: syntax errors can't be allowed (a snippet that does not "
                              "parse can't run)",
                              rule);
      r->enabled = false;
      return 0;
    }
  cleanup_free char *ids = list_names (p, -1);
  return csr_error_set (err, 0, "--allow %s: unknown rule '%s' (valid: %s; or call:NAME)", rule,
                        rule, ids && *ids ? ids : "none");
}

/* ------------------------------------------------------------ policy JSON */

static void
yajl_gen_freep (yajl_gen *g)
{
  if (*g)
    yajl_gen_free (*g);
}
#define cleanup_yajl_gen __attribute__ ((cleanup (yajl_gen_freep)))

static yajl_gen_status
gen_str (yajl_gen g, const char *s)
{
  return yajl_gen_string (g, (const unsigned char *)s, strlen (s));
}

/* One rule object; stops at the first generator error. */
static yajl_gen_status
gen_rule (yajl_gen g, const struct csr_rule *r)
{
  yajl_gen_status st = yajl_gen_map_open (g);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "id");
  if (st == yajl_gen_status_ok)
    st = gen_str (g, r->id);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "kind");
  if (st == yajl_gen_status_ok)
    st = gen_str (g, kind_names[r->kind]);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "args");
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_open (g);
  for (size_t i = 0; st == yajl_gen_status_ok && i < r->n_args; i++)
    st = gen_str (g, r->args[i]);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_close (g);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "message");
  if (st == yajl_gen_status_ok)
    st = r->message ? gen_str (g, r->message) : yajl_gen_null (g);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_close (g);
  return st;
}

int
csr_gate_policy_to_json_ex (const struct csr_gate_policy *p, bool run,
                            const char *const *heal_names, size_t n_heal, char **out,
                            csr_error **err)
{
  return csr_gate_policy_to_json_fd (p, run, heal_names, n_heal, -1, out, err);
}

int
csr_gate_policy_to_json_fd (const struct csr_gate_policy *p, bool run,
                            const char *const *heal_names, size_t n_heal, int source_fd, char **out,
                            csr_error **err)
{
  *out = NULL;
  cleanup_yajl_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return csr_error_set (err, ENOMEM, "gate policy JSON");
  /* Refuse invalid UTF-8 rather than pass it to the gate. */
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);
  yajl_gen_status st = yajl_gen_map_open (g);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "rules");
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_open (g);
  for (size_t i = 0; st == yajl_gen_status_ok && i < p->n_rules; i++)
    if (p->rules[i].enabled)
      st = gen_rule (g, &p->rules[i]);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_close (g);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "run");
  if (st == yajl_gen_status_ok)
    st = yajl_gen_bool (g, run);
  if (st == yajl_gen_status_ok)
    st = gen_str (g, "heal_names");
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_open (g);
  for (size_t i = 0; st == yajl_gen_status_ok && i < n_heal; i++)
    if (heal_names[i] != NULL)
      st = gen_str (g, heal_names[i]);
  if (st == yajl_gen_status_ok)
    st = yajl_gen_array_close (g);
  if (st == yajl_gen_status_ok && source_fd >= 0)
    {
      st = gen_str (g, "source_fd");
      if (st == yajl_gen_status_ok)
        st = yajl_gen_integer (g, source_fd);
    }
  if (st == yajl_gen_status_ok)
    st = yajl_gen_map_close (g);
  if (st != yajl_gen_status_ok)
    return csr_error_set (
        err, st == yajl_gen_invalid_string ? EILSEQ : EINVAL, "gate policy JSON: %s",
        st == yajl_gen_invalid_string ? "a string is not valid UTF-8" : "generator error");
  const unsigned char *buf = NULL;
  size_t len = 0;
  yajl_gen_get_buf (g, &buf, &len);
  char *s = malloc (len + 1);
  if (s == NULL)
    return csr_error_errno (err, "gate policy JSON");
  memcpy (s, buf, len);
  s[len] = '\0';
  *out = s;
  return 0;
}

int
csr_gate_policy_to_json (const struct csr_gate_policy *p, char **out, csr_error **err)
{
  return csr_gate_policy_to_json_ex (p, true, NULL, 0, out, err);
}

/* --------------------------------------------------------------- verdict */

const char *
csr_gate_outcome_name (enum csr_gate_outcome o)
{
  switch (o)
    {
    case CSR_GATE_PASS:
      return "pass";
    case CSR_GATE_BLOCKED:
      return "blocked";
    case CSR_GATE_SYNTAX_ERROR:
      return "syntax_error";
    case CSR_GATE_FAILED:
      return "failed";
    }
  return "unknown";
}

void
csr_gate_verdict_release (struct csr_gate_verdict *v)
{
  if (v == NULL)
    return;
  for (size_t i = 0; i < v->n_violations; i++)
    {
      free (v->violations[i].rule);
      free (v->violations[i].message);
    }
  free (v->violations);
  for (size_t i = 0; i < v->n_undefined; i++)
    {
      free (v->undefined[i].name);
      free (v->undefined[i].usage);
      free (v->undefined[i].suggest);
    }
  free (v->undefined);
  free (v->message);
  free (v->text);
  memset (v, 0, sizeof *v);
}

/* Why the verdict is malformed: the first problem wins. */
struct problem
{
  char msg[256];
};

static bool fail (struct problem *pb, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static bool
fail (struct problem *pb, const char *fmt, ...)
{
  if (pb->msg[0] == '\0')
    {
      va_list ap;
      va_start (ap, fmt);
      vsnprintf (pb->msg, sizeof pb->msg, fmt, ap);
      va_end (ap);
    }
  return false;
}

/* A string field: copied into *OUT (NULL allowed when NULLABLE and the
 * field is null or missing). */
static bool
get_str (yajl_val obj, const char *key, bool nullable, char **out, const char *what,
         struct problem *pb)
{
  yajl_val v = csr_json_get (obj, key);
  if ((v == NULL || YAJL_IS_NULL (v)) && nullable)
    return true;
  if (!YAJL_IS_STRING (v))
    return fail (pb, "%s: missing or bad '%s' (expected a string)", what, key);
  *out = strdup (v->u.string);
  return *out != NULL || fail (pb, "out of memory");
}

static bool
get_int (yajl_val obj, const char *key, int *out, const char *what, struct problem *pb)
{
  yajl_val v = csr_json_get (obj, key);
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < 0 || YAJL_GET_INTEGER (v) > INT_MAX)
    return fail (pb, "%s: missing or bad '%s' (expected an integer >= 0)", what, key);
  *out = (int)YAJL_GET_INTEGER (v);
  return true;
}

static bool
parse_violations (yajl_val arr, struct csr_gate_verdict *v, struct problem *pb)
{
  if (!YAJL_IS_ARRAY (arr))
    return fail (pb, "missing or bad 'violations' (expected an array)");
  size_t n = arr->u.array.len;
  v->violations = calloc (n ? n : 1, sizeof *v->violations);
  if (v->violations == NULL)
    return fail (pb, "out of memory");
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = arr->u.array.values[i];
      struct csr_violation *x = &v->violations[i];
      char what[48];
      snprintf (what, sizeof what, "violation %zu", i + 1);
      v->n_violations = i + 1;
      if (!YAJL_IS_OBJECT (o))
        return fail (pb, "%s is not an object", what);
      if (!get_str (o, "rule", false, &x->rule, what, pb)
          || !get_int (o, "line", &x->line, what, pb) || !get_int (o, "col", &x->col, what, pb)
          || !get_str (o, "message", false, &x->message, what, pb))
        return false;
    }
  return true;
}

static bool
parse_undefined (yajl_val arr, struct csr_gate_verdict *v, struct problem *pb)
{
  if (!YAJL_IS_ARRAY (arr))
    return fail (pb, "missing or bad 'undefined_names' (expected an array)");
  size_t n = arr->u.array.len;
  v->undefined = calloc (n ? n : 1, sizeof *v->undefined);
  if (v->undefined == NULL)
    return fail (pb, "out of memory");
  for (size_t i = 0; i < n; i++)
    {
      yajl_val o = arr->u.array.values[i];
      struct csr_undefined_name *x = &v->undefined[i];
      char what[48];
      snprintf (what, sizeof what, "undefined name %zu", i + 1);
      v->n_undefined = i + 1;
      if (!YAJL_IS_OBJECT (o))
        return fail (pb, "%s is not an object", what);
      if (!get_str (o, "name", false, &x->name, what, pb)
          || !get_int (o, "line", &x->line, what, pb)
          || !get_str (o, "usage", false, &x->usage, what, pb)
          || !get_str (o, "suggest", true, &x->suggest, what, pb))
        return false;
      if (strcmp (x->usage, "attribute") != 0 && strcmp (x->usage, "call") != 0
          && strcmp (x->usage, "name") != 0)
        return fail (pb, "%s: unknown usage '%s' (expected attribute, call or name)", what,
                     x->usage);
    }
  return true;
}

/* Fill V from the parsed document; false (with PB set) when malformed. */
static bool
parse_verdict (yajl_val doc, struct csr_gate_verdict *v, struct problem *pb)
{
  if (!YAJL_IS_OBJECT (doc))
    return fail (pb, "the verdict is not a JSON object");
  yajl_val verdict = csr_json_get (doc, "verdict");
  if (!YAJL_IS_STRING (verdict))
    return fail (pb, "missing or bad 'verdict' (expected a string)");
  const char *name = verdict->u.string;
  if (strcmp (name, "error") == 0)
    {
      yajl_val m = csr_json_get (doc, "message");
      return fail (pb, "the gate failed: %s", YAJL_IS_STRING (m) ? m->u.string : "no reason given");
    }
  enum csr_gate_outcome o;
  if (strcmp (name, "pass") == 0)
    o = CSR_GATE_PASS;
  else if (strcmp (name, "blocked") == 0)
    o = CSR_GATE_BLOCKED;
  else if (strcmp (name, "syntax_error") == 0)
    o = CSR_GATE_SYNTAX_ERROR;
  else
    return fail (pb, "unknown verdict '%.64s'", name);
  if (!parse_violations (csr_json_get (doc, "violations"), v, pb)
      || !parse_undefined (csr_json_get (doc, "undefined_names"), v, pb))
    return false;
  if (o == CSR_GATE_PASS && v->n_violations > 0)
    return fail (pb, "a pass verdict with %zu violations", v->n_violations);
  if (o == CSR_GATE_BLOCKED && v->n_violations == 0)
    return fail (pb, "a blocked verdict without violations");
  if (o == CSR_GATE_SYNTAX_ERROR)
    {
      yajl_val se = csr_json_get (doc, "syntax_error");
      if (!YAJL_IS_OBJECT (se))
        return fail (pb, "missing or bad 'syntax_error' (expected an object)");
      if (!get_int (se, "line", &v->line, "syntax_error", pb)
          || !get_int (se, "col", &v->col, "syntax_error", pb)
          || !get_str (se, "message", false, &v->message, "syntax_error", pb)
          || !get_str (se, "text", true, &v->text, "syntax_error", pb))
        return false;
    }
  v->outcome = o;
  return true;
}

int
csr_gate_verdict_parse (const char *json, size_t len, struct csr_gate_verdict *v)
{
  memset (v, 0, sizeof *v);
  v->outcome = CSR_GATE_FAILED;
  struct problem pb = { "" };
  size_t i = 0;
  while (json != NULL && i < len && strchr (" \t\r\n", json[i]) != NULL && json[i] != '\0')
    i++;
  if (json == NULL || i == len)
    fail (&pb, "the gate wrote no verdict");
  else if (memchr (json, '\0', len) != NULL)
    fail (&pb, "the verdict contains a NUL byte");
  else
    {
      cleanup_free char *buf = malloc (len + 1);
      char errbuf[256] = "";
      cleanup_yajl_val yajl_val doc = NULL;
      if (buf == NULL)
        fail (&pb, "out of memory");
      else
        {
          memcpy (buf, json, len);
          buf[len] = '\0';
          doc = yajl_tree_parse (buf, errbuf, sizeof errbuf);
          if (doc == NULL)
            {
              /* yajl's message spans lines (it quotes the input): keep the first. */
              errbuf[strcspn (errbuf, "\r\n")] = '\0';
              fail (&pb, "malformed verdict: %s", *errbuf ? errbuf : "not JSON");
            }
          else if (parse_verdict (doc, v, &pb))
            return 0;
        }
    }
  /* Malformed: never a pass, and nothing half-parsed left behind. */
  csr_gate_verdict_release (v);
  v->outcome = CSR_GATE_FAILED;
  v->message = strdup (pb.msg);
  return 0;
}
