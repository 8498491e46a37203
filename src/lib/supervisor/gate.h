/* csrun — the AST gate: its policy (policies/gate.conf) and its verdict.
 *
 * The gate itself is Python (policies/gate.py, embedded at build time) and
 * runs inside the jail: it reads ./snippet.py, applies the policy it gets as
 * JSON in sys.argv[1], writes one JSON verdict on fd 3, closes fd 3, and only
 * on "pass" runs the snippet.  This file is the C side: load the policy,
 * serialise it for the gate, parse the verdict. */
#ifndef CSRUN_GATE_H
#define CSRUN_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

/* ---------------------------------------------------------------- policy */

enum csr_rule_kind
{
  CSR_RULE_SYNTAX,       /* syntax errors (always on; can't be allowed away) */
  CSR_RULE_BROAD_EXCEPT, /* bare except / except of the listed classes */
  CSR_RULE_CALL,         /* calls of the listed names (aliases resolved); '*' suffix = prefix */
  CSR_RULE_LIMIT,        /* a numeric limit (max-source-bytes, max-ast-depth) */
  CSR_RULE_UNDEFINED,    /* global names used but never bound (reported; blocks heal_names) */
};

struct csr_rule
{
  char *id; /* e.g. "dangerous-call" */
  enum csr_rule_kind kind;
  char **args; /* targets (names) for except/call; one number for limit */
  size_t n_args;
  char *message; /* what to tell the user (what to change); may be NULL */
  bool enabled;
};

struct csr_gate_policy
{
  struct csr_rule *rules;
  size_t n_rules;
};

/* Parse the text of a gate.conf (format in csrun-policy(5)):
 *   # comment
 *   RULE-ID  KIND  ARG...        [ -- message text ]
 * KIND is syntax, except, call, limit or undefined; a trailing backslash
 * continues a line.  Errors name the line ("gate.conf line 7: ..." for
 * parse, "PATH line 7: ..." for load). */
int csr_gate_policy_parse (const char *text, size_t len, struct csr_gate_policy *p,
                           csr_error **err);
int csr_gate_policy_load (const char *path, struct csr_gate_policy *p, csr_error **err);
/* --allow RULE: disable RULE (by id, or "call:NAME" / "except:NAME" to drop
 * one target from every rule of that kind; a rule left without targets is
 * disabled).  Unknown ids and targets are an error; "syntax" can't be allowed. */
int csr_gate_policy_allow (struct csr_gate_policy *p, const char *rule, csr_error **err);
/* The JSON the gate reads from sys.argv[1]:
 * {"rules":[{"id":..,"kind":..,"args":[..],"message":..|null}],"run":..,"heal_names":[..]}
 * (enabled rules only).  RUN false: check only, never run the snippet.
 * HEAL_NAMES: the undefined names the healer can import; the gate blocks a
 * snippet that uses one (so it is healed before it runs).  *OUT is malloc'ed
 * and NUL-terminated.  csr_gate_policy_to_json: run true, no heal names. */
int csr_gate_policy_to_json_ex (const struct csr_gate_policy *p, bool run,
                                const char *const *heal_names, size_t n_heal, char **out,
                                csr_error **err);
/* issue 15: SOURCE_FD >= 0 adds "source_fd": the gate reads the snippet from
 * that descriptor instead of ./snippet.py (a sandbox's working directory is
 * its own: nothing is written there). */
int csr_gate_policy_to_json_fd (const struct csr_gate_policy *p, bool run,
                                const char *const *heal_names, size_t n_heal, int source_fd,
                                char **out, csr_error **err);
int csr_gate_policy_to_json (const struct csr_gate_policy *p, char **out, csr_error **err);
void csr_gate_policy_release (struct csr_gate_policy *p);

/* --------------------------------------------------------------- verdict */

/* The verdict JSON (one object, see csrun-policy(5)):
 *   {"verdict":"pass"|"blocked"|"syntax_error"|"error",
 *    "violations":[{"rule":..,"line":..,"col":..,"message":..}],
 *    "syntax_error":{"line":..,"col":..,"message":..,"text":..|null}  (syntax_error only)
 *    "undefined_names":[{"name":..,"line":..,"usage":"attribute"|"call"|"name",
 *                        "suggest":..  (optional: the one name one edit away)}],
 *    "message":..  ("error" only: why the gate could not decide)}
 * Unknown extra fields are ignored. */
enum csr_gate_outcome
{
  CSR_GATE_PASS,
  CSR_GATE_BLOCKED,      /* policy violations */
  CSR_GATE_SYNTAX_ERROR, /* the snippet does not parse */
  CSR_GATE_FAILED,       /* no verdict, or a malformed one: never a pass */
};
const char *csr_gate_outcome_name (enum csr_gate_outcome o); /* pass blocked syntax_error failed */

struct csr_violation
{
  char *rule;
  int line, col;
  char *message;
};

struct csr_undefined_name
{
  char *name;
  int line;
  char *usage; /* "attribute" (used as X.attr), "call" (X(...)), "name" (anything else) */
  /* The one defined name (or builtin) one edit away, visible at every use
   * (the gate's "suggest"; NULL when there is none or more than one). */
  char *suggest;
};

struct csr_gate_verdict
{
  enum csr_gate_outcome outcome;
  struct csr_violation *violations;
  size_t n_violations;
  /* CSR_GATE_SYNTAX_ERROR: */
  int line, col;
  char *message; /* also: why the verdict failed (CSR_GATE_FAILED) */
  char *text;    /* the offending source line */
  /* Global names the snippet loads but never binds (and that are not builtins):
   * the healer's input, reported even on "pass". */
  struct csr_undefined_name *undefined;
  size_t n_undefined;
};

/* Parse the verdict the gate wrote on fd 3.  Anything missing or malformed
 * gives outcome CSR_GATE_FAILED with a message (return value 0: that is a
 * verdict, not a csrun error). */
int csr_gate_verdict_parse (const char *json, size_t len, struct csr_gate_verdict *v);
void csr_gate_verdict_release (struct csr_gate_verdict *v);

#endif
