#include "config.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "supervisor/gate.h"

#include "helpers.h"

/* ------------------------------------------------------------- helpers */

static void
load_default (struct csr_gate_policy *p)
{
  char *path = test_policy_path ("gate.conf");
  csr_error *err = NULL;
  int rc = csr_gate_policy_load (path, p, &err);
  cr_assert_eq (rc, 0, "loading %s: %s", path, err ? err->msg : "");
  free (path);
}

static void
parse_ok (const char *text, struct csr_gate_policy *p)
{
  csr_error *err = NULL;
  int rc = csr_gate_policy_parse (text, strlen (text), p, &err);
  cr_assert_eq (rc, 0, "parse failed: %s\n--- input:\n%s", err ? err->msg : "", text);
  cr_assert_null (err);
}

/* Parse TEXT, expect failure with an error containing WANT. */
static void
parse_fails (const char *text, const char *want)
{
  struct csr_gate_policy p;
  csr_error *err = NULL;
  int rc = csr_gate_policy_parse (text, strlen (text), &p, &err);
  cr_assert_lt (rc, 0, "parse should fail:\n%s", text);
  cr_assert_not_null (err);
  cr_assert_not_null (strstr (err->msg, want), "error '%s' lacks '%s'", err->msg, want);
  cr_assert_eq (p.n_rules, 0);
  cr_assert_null (p.rules);
  csr_error_free (err);
}

static const struct csr_rule *
find (const struct csr_gate_policy *p, const char *id)
{
  for (size_t i = 0; i < p->n_rules; i++)
    if (strcmp (p->rules[i].id, id) == 0)
      return &p->rules[i];
  return NULL;
}

static bool
has_arg (const struct csr_rule *r, const char *arg)
{
  for (size_t i = 0; i < r->n_args; i++)
    if (strcmp (r->args[i], arg) == 0)
      return true;
  return false;
}

/* The text of a JSON string (asserted to be one). */
static const char *
str (yajl_val v)
{
  cr_assert (YAJL_IS_STRING (v));
  return v->u.string;
}

static yajl_val
get (yajl_val v, const char *key)
{
  const char *path[] = { key, NULL };
  return yajl_tree_get (v, path, yajl_t_any);
}

static yajl_val
to_tree (const struct csr_gate_policy *p, bool run, const char *const *heal, size_t n_heal)
{
  char *json = NULL;
  csr_error *err = NULL;
  cr_assert_eq (csr_gate_policy_to_json_ex (p, run, heal, n_heal, &json, &err), 0, "%s",
                err ? err->msg : "");
  cr_assert_not_null (json);
  char errbuf[256] = "";
  yajl_val t = yajl_tree_parse (json, errbuf, sizeof errbuf);
  cr_assert_not_null (t, "not JSON (%s): %s", errbuf, json);
  free (json);
  return t;
}

/* The rule object with this id in a policy JSON tree, or NULL. */
static yajl_val
json_rule (yajl_val t, const char *id)
{
  yajl_val rules = get (t, "rules");
  cr_assert (YAJL_IS_ARRAY (rules));
  for (size_t i = 0; i < rules->u.array.len; i++)
    {
      yajl_val r = rules->u.array.values[i];
      yajl_val v = get (r, "id");
      cr_assert (YAJL_IS_STRING (v));
      if (strcmp (str (v), id) == 0)
        return r;
    }
  return NULL;
}

/* ------------------------------------------------------- policy parsing */

Test (policy, default_file)
{
  struct csr_gate_policy p;
  load_default (&p);
  const char *ids[] = { "syntax",           "broad-except",  "dangerous-call",
                        "max-source-bytes", "max-ast-depth", "undefined-name" };
  enum csr_rule_kind kinds[] = { CSR_RULE_SYNTAX, CSR_RULE_BROAD_EXCEPT, CSR_RULE_CALL,
                                 CSR_RULE_LIMIT,  CSR_RULE_LIMIT,        CSR_RULE_UNDEFINED };
  cr_assert_eq (p.n_rules, 6);
  for (size_t i = 0; i < 6; i++)
    {
      const struct csr_rule *r = find (&p, ids[i]);
      cr_assert_not_null (r, "no rule %s", ids[i]);
      cr_assert_eq (r->kind, kinds[i], "%s", ids[i]);
      cr_assert (r->enabled);
    }
  const struct csr_rule *calls = find (&p, "dangerous-call");
  const char *targets[] = { "eval",
                            "exec",
                            "compile",
                            "__import__",
                            "os.system",
                            "os.popen",
                            "os.exec*",
                            "os.spawn*",
                            "os.posix_spawn*",
                            "subprocess.run",
                            "subprocess.call",
                            "subprocess.Popen",
                            "subprocess.check_output",
                            "subprocess.check_call",
                            "subprocess.getoutput",
                            "subprocess.getstatusoutput" };
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    cr_assert (has_arg (calls, targets[i]), "dangerous-call lacks %s", targets[i]);
  cr_assert_not_null (calls->message);
  cr_assert_null (strchr (calls->message, '\\'), "continuation left in: %s", calls->message);
  const struct csr_rule *ex = find (&p, "broad-except");
  cr_assert_eq (ex->n_args, 2);
  cr_assert_str_eq (ex->args[0], "BaseException");
  cr_assert_str_eq (ex->args[1], "Exception");
  cr_assert_not_null (strstr (ex->message, "except ValueError:"));
  cr_assert_str_eq (find (&p, "max-source-bytes")->args[0], "1000000");
  cr_assert_str_eq (find (&p, "max-ast-depth")->args[0], "200");
  cr_assert_null (find (&p, "syntax")->message);
  csr_gate_policy_release (&p);
  cr_assert_eq (p.n_rules, 0);
  cr_assert_null (p.rules);
  csr_gate_policy_release (&p); /* twice is harmless */
}

Test (policy, format_details)
{
  struct csr_gate_policy p;
  parse_ok ("# a comment\n"
            "\n"
            "   # indented comment\n"
            "syntax syntax\r\n"
            "calls\tcall  a.b   c* \\\n"
            "   # a comment inside a continuation is skipped\n"
            "      d.e.f   mod.*  --   the   message \\\n"
            "  goes on  \n"
            "max-source-bytes limit 5\n"
            "max-ast-depth limit 7 -- flat\n"
            "ex except builtins.Exception --\n"
            "undefined-name undefined",
            &p);
  cr_assert_eq (p.n_rules, 6);
  const struct csr_rule *r = find (&p, "calls");
  cr_assert_eq (r->kind, CSR_RULE_CALL);
  cr_assert_eq (r->n_args, 4);
  cr_assert_str_eq (r->args[0], "a.b");
  cr_assert_str_eq (r->args[1], "c*");
  cr_assert_str_eq (r->args[2], "d.e.f");
  cr_assert_str_eq (r->args[3], "mod.*");
  cr_assert_str_eq (r->message, "the message goes on");
  cr_assert_str_eq (find (&p, "max-ast-depth")->message, "flat");
  cr_assert_null (find (&p, "ex")->message, "an empty message is no message");
  cr_assert_eq (find (&p, "undefined-name")->n_args, 0);
  csr_gate_policy_release (&p);
}

Test (policy, empty_is_no_rules)
{
  struct csr_gate_policy p;
  parse_ok ("", &p);
  cr_assert_eq (p.n_rules, 0);
  parse_ok ("# only comments\n\n", &p);
  cr_assert_eq (p.n_rules, 0);
  csr_gate_policy_release (&p);
}

Test (policy, errors_name_the_line)
{
  parse_fails ("syntax syntax\n# two\n\n\n\n\ndangerous-call cal eval\n",
               "gate.conf line 7: unknown kind 'cal' (expected syntax, except, call, limit or "
               "undefined)");
  parse_fails ("a call x \\\n  y\nb\n", "gate.conf line 3: rule 'b' has no kind");
  parse_fails ("a -- msg\n", "line 1: rule 'a' has no kind");
  parse_fails ("9lives call x\n", "line 1: '9lives' is not a rule id");
  parse_fails ("a call x\na except Y\n", "line 2: rule 'a' is defined twice");
  parse_fails ("a call\n", "line 1: rule 'a' (call) lists no names");
  parse_fails ("a call -- nothing\n", "rule 'a' (call) lists no names");
  parse_fails ("a except\n", "rule 'a' (except) lists no names");
  parse_fails ("a call os..system\n", "'os..system' is not a dotted name");
  parse_fails ("a call os.sys*tem\n", "'os.sys*tem' is not a dotted name");
  parse_fails ("a call 1os\n", "'1os' is not a dotted name");
  parse_fails ("a except Exc*\n", "'Exc*' is not a dotted class name");
  parse_fails ("s syntax extra\n", "rule 's' (syntax) takes no arguments, got 'extra'");
  parse_fails ("u undefined x\n", "rule 'u' (undefined) takes no arguments");
  parse_fails ("max-depth limit 5\n", "unknown limit 'max-depth'");
  parse_fails ("max-ast-depth limit\n", "limit 'max-ast-depth' takes one number, got 0");
  parse_fails ("max-ast-depth limit 1 2\n", "takes one number, got 2");
  parse_fails ("max-ast-depth limit 0\n", "'0' is not a number from 1 to");
  parse_fails ("max-ast-depth limit -5\n", "'-5' is not a number");
  parse_fails ("max-ast-depth limit 12x\n", "'12x' is not a number");
  parse_fails ("max-ast-depth limit 99999999999\n", "is not a number");
  parse_fails ("a call x -- caf\xc3\n", "line 1: not valid UTF-8");
  struct csr_gate_policy p;
  csr_error *err = NULL;
  cr_assert_lt (csr_gate_policy_parse ("a call x\nb call \0y\n", 19, &p, &err), 0);
  cr_assert_not_null (strstr (err->msg, "line 2: contains a NUL byte"), "%s", err->msg);
  csr_error_free (err);
}

Test (policy, load_errors)
{
  struct csr_gate_policy p;
  csr_error *err = NULL;
  cr_assert_lt (csr_gate_policy_load ("/nonexistent/gate.conf", &p, &err), 0);
  cr_assert_not_null (err);
  cr_assert_not_null (strstr (csr_error_text (err), "/nonexistent/gate.conf"));
  csr_error_free (err);
  err = NULL;

  char path[4096];
  snprintf (path, sizeof path, "%s/csrun-test-gate-XXXXXX",
            getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  int fd = mkstemp (path);
  cr_assert_geq (fd, 0);
  cr_assert_eq (write (fd, "x call y\nz bogus\n", 17), 17);
  close (fd);
  cr_assert_lt (csr_gate_policy_load (path, &p, &err), 0);
  char want[4200];
  snprintf (want, sizeof want, "%s line 2: unknown kind 'bogus'", path);
  cr_assert_not_null (strstr (err->msg, want), "%s", err->msg);
  csr_error_free (err);
  unlink (path);
}

/* ----------------------------------------------------------------- allow */

Test (allow, disable_rule)
{
  struct csr_gate_policy p;
  load_default (&p);
  csr_error *err = NULL;
  cr_assert_eq (csr_gate_policy_allow (&p, "broad-except", &err), 0);
  cr_assert_not (find (&p, "broad-except")->enabled);
  cr_assert_eq (csr_gate_policy_allow (&p, "broad-except", &err), 0, "allowing twice is fine");
  yajl_val t = to_tree (&p, true, NULL, 0);
  cr_assert_null (json_rule (t, "broad-except"), "a disabled rule is not sent to the gate");
  cr_assert_not_null (json_rule (t, "dangerous-call"));
  yajl_tree_free (t);
  csr_gate_policy_release (&p);
}

Test (allow, one_call_target)
{
  struct csr_gate_policy p;
  load_default (&p);
  csr_error *err = NULL;
  cr_assert_eq (csr_gate_policy_allow (&p, "call:os.system", &err), 0, "%s", err ? err->msg : "");
  const struct csr_rule *r = find (&p, "dangerous-call");
  cr_assert (r->enabled);
  cr_assert_not (has_arg (r, "os.system"));
  cr_assert (has_arg (r, "os.popen"));
  cr_assert (has_arg (r, "eval"));
  /* Gone now: a second time is an error naming what is listed. */
  cr_assert_lt (csr_gate_policy_allow (&p, "call:os.system", &err), 0);
  cr_assert_not_null (strstr (err->msg, "no call rule lists 'os.system'"), "%s", err->msg);
  cr_assert_not_null (strstr (err->msg, "os.popen"), "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  cr_assert_eq (csr_gate_policy_allow (&p, "call:os.exec*", &err), 0, "patterns by their text");
  cr_assert_eq (csr_gate_policy_allow (&p, "except:Exception", &err), 0);
  cr_assert_not (has_arg (find (&p, "broad-except"), "Exception"));
  cr_assert (has_arg (find (&p, "broad-except"), "BaseException"));
  csr_gate_policy_release (&p);
}

Test (allow, last_target_disables)
{
  struct csr_gate_policy p;
  parse_ok ("one call eval\ntwo call eval os.system\n", &p);
  csr_error *err = NULL;
  cr_assert_eq (csr_gate_policy_allow (&p, "call:eval", &err), 0);
  cr_assert_not (find (&p, "one")->enabled, "no targets left");
  cr_assert (find (&p, "two")->enabled);
  cr_assert_eq (find (&p, "two")->n_args, 1);
  yajl_val t = to_tree (&p, true, NULL, 0);
  cr_assert_null (json_rule (t, "one"));
  yajl_tree_free (t);
  csr_gate_policy_release (&p);
}

Test (allow, errors)
{
  struct csr_gate_policy p;
  load_default (&p);
  csr_error *err = NULL;
  cr_assert_lt (csr_gate_policy_allow (&p, "syntax", &err), 0);
  cr_assert_not_null (strstr (err->msg, "syntax errors can't be allowed"), "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  cr_assert (find (&p, "syntax")->enabled);

  cr_assert_lt (csr_gate_policy_allow (&p, "broad-exept", &err), 0);
  cr_assert_not_null (strstr (err->msg, "unknown rule 'broad-exept'"), "%s", err->msg);
  cr_assert_not_null (strstr (err->msg, "syntax, broad-except, dangerous-call, max-source-bytes, "
                                        "max-ast-depth, undefined-name"),
                      "%s", err->msg);
  csr_error_free (err);
  err = NULL;

  cr_assert_lt (csr_gate_policy_allow (&p, "calls:eval", &err), 0);
  cr_assert_not_null (strstr (err->msg, "unknown form"), "%s", err->msg);
  csr_error_free (err);
  err = NULL;
  cr_assert_lt (csr_gate_policy_allow (&p, "", &err), 0);
  csr_error_free (err);
  err = NULL;
  cr_assert_lt (csr_gate_policy_allow (&p, "except:ValueError", &err), 0);
  cr_assert_not_null (strstr (err->msg, "listed: BaseException, Exception"), "%s", err->msg);
  csr_error_free (err);
  csr_gate_policy_release (&p);
}

/* --------------------------------------------------------------- to_json */

Test (to_json, round_trip)
{
  struct csr_gate_policy p;
  load_default (&p);
  const char *heal[] = { "math", "Counter", NULL, "json" };
  yajl_val t = to_tree (&p, false, heal, 4);
  cr_assert (YAJL_IS_FALSE (get (t, "run")));
  yajl_val hn = get (t, "heal_names");
  cr_assert (YAJL_IS_ARRAY (hn));
  cr_assert_eq (hn->u.array.len, 3, "NULL entries are skipped");
  cr_assert_str_eq (str (hn->u.array.values[1]), "Counter");
  yajl_val rules = get (t, "rules");
  cr_assert_eq (rules->u.array.len, p.n_rules);
  for (size_t i = 0; i < p.n_rules; i++)
    {
      const struct csr_rule *r = &p.rules[i];
      yajl_val j = rules->u.array.values[i];
      cr_assert_str_eq (str (get (j, "id")), r->id);
      const char *kind = str (get (j, "kind"));
      const char *want[] = { "syntax", "except", "call", "limit", "undefined" };
      cr_assert_str_eq (kind, want[r->kind]);
      yajl_val args = get (j, "args");
      cr_assert (YAJL_IS_ARRAY (args));
      cr_assert_eq (args->u.array.len, r->n_args);
      for (size_t k = 0; k < r->n_args; k++)
        cr_assert_str_eq (str (args->u.array.values[k]), r->args[k]);
      yajl_val msg = get (j, "message");
      if (r->message)
        cr_assert_str_eq (str (msg), r->message);
      else
        cr_assert (YAJL_IS_NULL (msg));
    }
  yajl_tree_free (t);

  /* The plain form: run true, no heal names. */
  char *json = NULL;
  cr_assert_eq (csr_gate_policy_to_json (&p, &json, NULL), 0);
  t = yajl_tree_parse (json, NULL, 0);
  cr_assert (YAJL_IS_TRUE (get (t, "run")));
  cr_assert_eq (get (t, "heal_names")->u.array.len, 0);
  yajl_tree_free (t);
  free (json);
  csr_gate_policy_release (&p);
}

Test (to_json, escapes)
{
  struct csr_gate_policy p;
  parse_ok ("r call x -- say \"hi\" \\ back\\slash and caf\xc3\xa9\n", &p);
  yajl_val t = to_tree (&p, true, NULL, 0);
  yajl_val r = json_rule (t, "r");
  cr_assert_str_eq (str (get (r, "message")), "say \"hi\" \\ back\\slash and caf\xc3\xa9",
                    "a backslash that does not end the line stays");
  yajl_tree_free (t);
  csr_gate_policy_release (&p);

  struct csr_gate_policy empty = { 0 };
  t = to_tree (&empty, true, NULL, 0);
  cr_assert_eq (get (t, "rules")->u.array.len, 0);
  yajl_tree_free (t);

  /* A heal name that is not UTF-8 is refused, not passed on. */
  char *json = NULL;
  csr_error *err = NULL;
  const char *bad[] = { "ok", "b\xff" };
  cr_assert_lt (csr_gate_policy_to_json_ex (&empty, true, bad, 2, &json, &err), 0);
  cr_assert_null (json);
  cr_assert_not_null (strstr (err->msg, "UTF-8"), "%s", err->msg);
  csr_error_free (err);
}

/* --------------------------------------------------------------- verdict */

static void
verdict (const char *json, struct csr_gate_verdict *v)
{
  cr_assert_eq (csr_gate_verdict_parse (json, json ? strlen (json) : 0, v), 0);
}

Test (verdict, pass)
{
  struct csr_gate_verdict v;
  verdict ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[{\"name\":\"frob\","
           "\"line\":3,\"usage\":\"call\"}],\"undefined_skipped\":null,\"future\":{\"x\":[1]}}\n",
           &v);
  cr_assert_eq (v.outcome, CSR_GATE_PASS, "%s", v.message ? v.message : "");
  cr_assert_eq (v.n_violations, 0);
  cr_assert_eq (v.n_undefined, 1);
  cr_assert_str_eq (v.undefined[0].name, "frob");
  cr_assert_eq (v.undefined[0].line, 3);
  cr_assert_str_eq (v.undefined[0].usage, "call");
  cr_assert_null (v.message);
  csr_gate_verdict_release (&v);
  cr_assert_null (v.undefined);
  csr_gate_verdict_release (&v);
}

Test (verdict, blocked)
{
  struct csr_gate_verdict v;
  verdict ("{\"verdict\":\"blocked\",\"violations\":["
           "{\"rule\":\"dangerous-call\",\"line\":3,\"col\":4,\"message\":\"os.system() runs a "
           "shell command\"},"
           "{\"rule\":\"undefined-name\",\"line\":1,\"col\":6,\"message\":\"name 'math' is used "
           "but never defined or imported\",\"extra\":true}],"
           "\"undefined_names\":[{\"name\":\"math\",\"line\":1,\"usage\":\"attribute\"}]}",
           &v);
  cr_assert_eq (v.outcome, CSR_GATE_BLOCKED, "%s", v.message ? v.message : "");
  cr_assert_eq (v.n_violations, 2);
  cr_assert_str_eq (v.violations[0].rule, "dangerous-call");
  cr_assert_eq (v.violations[0].line, 3);
  cr_assert_eq (v.violations[0].col, 4);
  cr_assert_str_eq (v.violations[0].message, "os.system() runs a shell command");
  cr_assert_str_eq (v.violations[1].rule, "undefined-name");
  cr_assert_str_eq (v.undefined[0].usage, "attribute");
  csr_gate_verdict_release (&v);
}

Test (verdict, syntax_error)
{
  struct csr_gate_verdict v;
  verdict (
      "{\"verdict\":\"syntax_error\",\"violations\":[],\"syntax_error\":{\"line\":1,\"col\":"
      "5,\"message\":\"'(' was never closed\",\"text\":\"print(\\n\",\"type\":\"SyntaxError\"},"
      "\"undefined_names\":[]}",
      &v);
  cr_assert_eq (v.outcome, CSR_GATE_SYNTAX_ERROR, "%s", v.message ? v.message : "");
  cr_assert_eq (v.line, 1);
  cr_assert_eq (v.col, 5);
  cr_assert_str_eq (v.message, "'(' was never closed");
  cr_assert_str_eq (v.text, "print(\n");
  csr_gate_verdict_release (&v);

  verdict ("{\"verdict\":\"syntax_error\",\"violations\":[],\"syntax_error\":{\"line\":2,\"col\":0,"
           "\"message\":\"m\",\"text\":null},\"undefined_names\":[]}",
           &v);
  cr_assert_eq (v.outcome, CSR_GATE_SYNTAX_ERROR);
  cr_assert_null (v.text, "text may be null");
  csr_gate_verdict_release (&v);
}

/* Malformed input: always FAILED with a reason, never PASS. */
static void
fails (const char *json, size_t len, const char *want)
{
  struct csr_gate_verdict v;
  cr_assert_eq (csr_gate_verdict_parse (json, len, &v), 0);
  cr_assert_eq (v.outcome, CSR_GATE_FAILED, "accepted: %.*s", (int)len, json ? json : "");
  cr_assert_not_null (v.message);
  cr_assert_not_null (strstr (v.message, want), "message '%s' lacks '%s'", v.message, want);
  cr_assert_eq (v.n_violations, 0);
  cr_assert_null (v.violations);
  cr_assert_eq (v.n_undefined, 0);
  cr_assert_null (v.text);
  csr_gate_verdict_release (&v);
}

#define FAILS(json, want) fails ((json), strlen (json), (want))

Test (verdict, malformed)
{
  fails (NULL, 0, "no verdict");
  FAILS ("", "no verdict");
  FAILS (" \n\t", "no verdict");
  FAILS ("pass", "malformed verdict");
  FAILS ("{\"verdict\":\"pass\",", "malformed verdict");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[]", "malformed verdict");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[]} trailing",
         "malformed verdict");
  fails ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[]}\0", 59, "NUL byte");
  FAILS ("[\"pass\"]", "not a JSON object");
  FAILS ("\"pass\"", "not a JSON object");
  FAILS ("{}", "missing or bad 'verdict'");
  FAILS ("{\"verdict\":1,\"violations\":[],\"undefined_names\":[]}", "missing or bad 'verdict'");
  FAILS ("{\"verdict\":\"PASS\",\"violations\":[],\"undefined_names\":[]}",
         "unknown verdict 'PASS'");
  FAILS ("{\"verdict\":\"ok\",\"violations\":[],\"undefined_names\":[]}", "unknown verdict");
  FAILS ("{\"verdict\":\"pass\",\"undefined_names\":[]}", "missing or bad 'violations'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":{},\"undefined_names\":[]}",
         "missing or bad 'violations'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[]}", "missing or bad 'undefined_names'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":null}",
         "missing or bad 'undefined_names'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[{\"rule\":\"x\",\"line\":1,\"col\":0,\"message\":"
         "\"m\"}],\"undefined_names\":[]}",
         "a pass verdict with 1 violations");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[],\"undefined_names\":[]}",
         "blocked verdict without violations");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[1],\"undefined_names\":[]}",
         "violation 1 is not an object");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":\"1\",\"col\":0,"
         "\"message\":\"m\"}],\"undefined_names\":[]}",
         "violation 1: missing or bad 'line'");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":1,\"col\":-1,"
         "\"message\":\"m\"}],\"undefined_names\":[]}",
         "violation 1: missing or bad 'col'");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":1.5,\"col\":0,"
         "\"message\":\"m\"}],\"undefined_names\":[]}",
         "missing or bad 'line'");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":99999999999,\"col\":0,"
         "\"message\":\"m\"}],\"undefined_names\":[]}",
         "missing or bad 'line'");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":1,\"col\":0,"
         "\"message\":\"m\"},{\"line\":1,\"col\":0,\"message\":\"m\"}],\"undefined_names\":[]}",
         "violation 2: missing or bad 'rule'");
  FAILS ("{\"verdict\":\"blocked\",\"violations\":[{\"rule\":\"x\",\"line\":1,\"col\":0,"
         "\"message\":null}],\"undefined_names\":[]}",
         "violation 1: missing or bad 'message'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[{\"name\":\"x\",\"line\":1,"
         "\"usage\":\"import\"}]}",
         "undefined name 1: unknown usage 'import'");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[{\"name\":\"x\",\"usage\":"
         "\"call\"}]}",
         "undefined name 1: missing or bad 'line'");
  FAILS ("{\"verdict\":\"syntax_error\",\"violations\":[],\"undefined_names\":[]}",
         "missing or bad 'syntax_error'");
  FAILS ("{\"verdict\":\"syntax_error\",\"violations\":[],\"undefined_names\":[],\"syntax_error\":"
         "{\"line\":1,\"col\":0}}",
         "syntax_error: missing or bad 'message'");
  FAILS ("{\"verdict\":\"syntax_error\",\"violations\":[],\"undefined_names\":[],\"syntax_error\":"
         "{\"line\":1,\"col\":0,\"message\":\"m\",\"text\":5}}",
         "syntax_error: missing or bad 'text'");
  FAILS ("{\"verdict\":\"error\",\"message\":\"no policy given\",\"violations\":[],"
         "\"undefined_names\":[]}",
         "the gate failed: no policy given");
  FAILS ("{\"verdict\":\"error\"}", "the gate failed: no reason given");
  FAILS ("{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[],\"x\":\"\xff\"}",
         "malformed verdict");
}

Test (verdict, truncated_never_passes)
{
  const char *good = "{\"verdict\":\"pass\",\"violations\":[],\"undefined_names\":[{\"name\":"
                     "\"math\",\"line\":1,\"usage\":\"attribute\"}]}";
  size_t n = strlen (good);
  for (size_t len = 0; len < n; len++)
    {
      struct csr_gate_verdict v;
      cr_assert_eq (csr_gate_verdict_parse (good, len, &v), 0);
      cr_assert_eq (v.outcome, CSR_GATE_FAILED, "prefix of %zu bytes passed", len);
      cr_assert_not_null (v.message);
      csr_gate_verdict_release (&v);
    }
  struct csr_gate_verdict v;
  cr_assert_eq (csr_gate_verdict_parse (good, n, &v), 0);
  cr_assert_eq (v.outcome, CSR_GATE_PASS);
  csr_gate_verdict_release (&v);
}

Test (verdict, outcome_names)
{
  cr_assert_str_eq (csr_gate_outcome_name (CSR_GATE_PASS), "pass");
  cr_assert_str_eq (csr_gate_outcome_name (CSR_GATE_BLOCKED), "blocked");
  cr_assert_str_eq (csr_gate_outcome_name (CSR_GATE_SYNTAX_ERROR), "syntax_error");
  cr_assert_str_eq (csr_gate_outcome_name (CSR_GATE_FAILED), "failed");
  cr_assert_str_eq (csr_gate_outcome_name ((enum csr_gate_outcome)42), "unknown");
}
