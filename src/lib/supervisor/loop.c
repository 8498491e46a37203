#include "config.h"
#include "loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../util/clock.h"
#include "../util/cleanup.h"
#include "../util/digest.h"
#include "gatecode.h"
#include "launch.h"
#include "pkghint.h"
#include "prompt.h"

#define JAIL_PYTHON "/usr/bin/python3"

/* python3 -I -S -u -c BOOT GATE POLICY [ARGS...]: the bootstrap loads the
 * precompiled gate from fd 4, or compiles its source (fd 4's; GATE is ""
 * then, else the source). */
static char **
gate_argv (const struct csr_loop_opts *o, const char *policy_json, char **args, int n_args)
{
  char **argv = calloc ((size_t)n_args + 9, sizeof *argv);
  if (argv == NULL)
    return NULL;
  size_t a = 0;
  argv[a++] = (char *)JAIL_PYTHON;
  argv[a++] = (char *)"-I";
  argv[a++] = (char *)"-S";
  argv[a++] = (char *)"-u";
  argv[a++] = (char *)"-c";
  argv[a++] = (char *)csr_gate_boot_py;
  argv[a++] = (char *)(o->gate_code_fd >= 0 ? "" : csr_gate_py);
  argv[a++] = (char *)policy_json;
  for (int i = 0; i < n_args; i++)
    argv[a++] = args[i];
  argv[a] = NULL;
  return argv;
}

static char *
xstrdup (const char *s)
{
  return s ? strdup (s) : NULL;
}

/* The diagnosis of an attempt whose gate did not pass. */
static void
diagnose_gate (struct csr_diagnosis *d, const struct csr_gate_verdict *v, const char *code)
{
  if (v->outcome == CSR_GATE_SYNTAX_ERROR)
    {
      csr_diagnosis_set (d, "SyntaxError", v->message ? v->message : "", v->line, code);
      return;
    }
  if (v->outcome == CSR_GATE_BLOCKED && v->n_violations > 0)
    {
      const struct csr_violation *x = &v->violations[0];
      cleanup_free char *msg = NULL;
      if (asprintf (&msg, "%s: %s%s", x->rule ? x->rule : "policy", x->message ? x->message : "",
                    v->n_violations > 1 ? " (and more: see gate.violations)" : "")
          < 0)
        msg = NULL;
      csr_diagnosis_set (d, "StaticSafetyViolation", msg ? msg : "blocked by the gate", x->line,
                         code);
      return;
    }
  csr_diagnosis_set (d, "UnknownError", v->message ? v->message : "the gate gave no verdict", 0,
                     code);
}

/* What B kept, with the cut marker between head and tail (so the scan and the
 * traceback parser never read a line made of two halves). */
static char *
marked_contents (const struct csr_bbuf *b)
{
  size_t tlen = 0;
  cleanup_free char *tail = csr_bbuf_tail (b, &tlen);
  char marker[64] = "";
  if (csr_bbuf_dropped (b))
    snprintf (marker, sizeof marker, "\n[... csrun: %llu bytes dropped ...]\n",
              (unsigned long long)csr_bbuf_dropped (b));
  char *text = NULL;
  if (asprintf (&text, "%.*s%s%.*s", (int)b->head_len, b->head ? b->head : "", marker, (int)tlen,
                tail ? tail : "")
      < 0)
    return NULL;
  return text;
}

/* The diagnosis of an attempt that ran and failed. */
static void
diagnose_run (struct csr_diagnosis *d, const struct csr_attempt *a, const char *code)
{
  if (a->timed_out)
    {
      char msg[96];
      snprintf (msg, sizeof msg, "the attempt ran longer than the timeout (%llu ms)",
                (unsigned long long)a->duration_ms);
      csr_diagnosis_set (d, "Timeout", msg, 0, code);
      return;
    }
  if (a->oom_killed)
    {
      csr_diagnosis_set (d, "OutOfMemory",
                         "the jail reached its memory limit and the kernel killed the snippet", 0,
                         code);
      return;
    }
  if (!a->exited && a->signal)
    {
      char msg[96];
      snprintf (msg, sizeof msg, "killed by signal %d (SIG%s)", a->signal,
                sigabbrev_np (a->signal) ? sigabbrev_np (a->signal) : "?");
      csr_diagnosis_set (d, "Signal", msg, 0, code);
      return;
    }
  cleanup_free char *text = marked_contents (&a->err);
  csr_classify_exit (text ? text : "", text ? strlen (text) : 0, a->exited ? a->exit_code : 0, code,
                     d);
}

/* A network error in a jail without network: say where the network went. */
static void
hint_network (struct csr_diagnosis *d, const struct csr_loop_opts *o)
{
  if (!o->base->host_net && csr_diagnosis_is_network (d))
    d->hint = CSR_HINT_NO_NETWORK;
}

/* The jail of one gated run of CODE: the base spec with ARGV, snippet.py and
 * the precompiled gate.  SNIPPET is storage for the file. */
static struct jail_snippet
gated_spec (const struct csr_loop_opts *o, char **argv, const char *code, struct csr_file *snippet)
{
  *snippet = (struct csr_file){ "snippet.py", code, strlen (code), 0444 };
  struct jail_snippet spec = *o->base;
  spec.argv = argv;
  spec.files = snippet;
  spec.n_files = 1;
  if (o->gate_code_fd >= 0)
    {
      /* fd 3 is the verdict pipe (capture's); fd 4 the precompiled gate. */
      lseek (o->gate_code_fd, 0, SEEK_SET);
      spec.extra_fds[0] = -1;
      spec.extra_fds[1] = o->gate_code_fd;
      spec.n_extra_fds = 2;
    }
  return spec;
}

/* issue 15: the attempt as the launcher gets it (launcher.h). */
static struct csr_launch_req
launch_req (const struct jail_snippet *spec, const char *code, const char *policy,
            char *const *args, int n_args)
{
  return (struct csr_launch_req){ .spec = spec,
                                  .code = code,
                                  .code_len = strlen (code),
                                  .policy_json = policy,
                                  .args = args,
                                  .n_args = n_args };
}

static char *policy_json (const struct csr_loop_opts *o, bool with_names, bool run,
                          csr_error **err);

/* ---- issue 17: the attempts whose code did not run share one jail */
static void
drop_kept (struct csr_gated_jail **g)
{
  csr_capture_drop (*g);
  *g = NULL;
}

/* May attempt I's jail wait for the next attempt's code (capture.h)?  When
 * one may follow and a fix can come, and not with --out: the gate writes
 * the next code to snippet.py, which would then count as an output.  (O->kept
 * is NULL when the launcher can't: a session's cell.) */
static bool
may_keep (const struct csr_loop_opts *o, int i)
{
  return o->kept && !o->check_only && i + 1 < o->max_attempts && !o->base->has_outputs
         && !o->no_heal_why && (o->heal || (o->llm && o->llm->provider) || o->patch_cmd);
}

/* The gate on R's code with its policy (and the code, if it passes and the
 * policy runs it) as attempt A: in the jail the last attempt left waiting,
 * else in a new one (R's spec, through the launcher).  A's jail may wait in
 * turn when it is the reused one and KEEP_REUSED, or a new one and
 * KEEP_NEW.  As csr_capture_run_attempt. */
static int
run_gated (const struct csr_loop_opts *o, const struct csr_launch_req *r,
           const struct csr_capture_opts *co, bool keep_reused, bool keep_new,
           struct csr_attempt *a, char **vtext, size_t *vlen, csr_error **err)
{
  if (o->kept && *o->kept)
    {
      struct csr_gated_jail *g = *o->kept;
      *o->kept = NULL;
      int rc = csr_capture_next (g, r->policy_json, r->code, co, a, vtext, vlen,
                                 keep_reused ? o->kept : NULL, err);
      if (rc != CSR_CAPTURE_GONE)
        {
          a->reused_jail = true;
          return rc;
        }
    }
  return csr_capture_run_kept (r, co, a, vtext, vlen, keep_new ? o->kept : NULL, err);
}

/* Run only the gate on CODE (never CODE itself), where an attempt runs,
 * with nothing live and no stdin: *V gets the verdict.  WITH_NAMES: the
 * policy has heal.conf's names (see policy_json).  It runs in the jail the
 * last attempt left waiting, which then waits again; a new jail for a check
 * has no --in, --mount or --out: it is not kept. */
static int
gate_only (const struct csr_loop_opts *o, const char *code, bool with_names,
           struct csr_gate_verdict *v, csr_error **err)
{
  cleanup_free char *json = policy_json (o, with_names, false, err);
  if (json == NULL)
    return -1;
  cleanup_free char **argv = gate_argv (o, json, NULL, 0);
  if (argv == NULL)
    return csr_error_set (err, ENOMEM, "allocate argv");
  struct csr_file snippet;
  struct jail_snippet spec = gated_spec (o, argv, code, &snippet);
  /* Files in and out: only for attempts (a check must not replace the
   * outputs' pack). */
  spec.has_inputs = spec.has_outputs = false;
  spec.n_binds = 0;
  struct csr_attempt a;
  memset (&a, 0, sizeof a);
  cleanup_free char *vtext = NULL;
  size_t vlen = 0;
  struct csr_capture_opts co = o->capture; /* nothing runs: no stdin, nothing live */
  co.stdin_store = NULL;
  co.passthrough_out = co.passthrough_err = -1;
  struct csr_launch_req r = launch_req (&spec, code, json, NULL, 0);
  int rc = run_gated (o, &r, &co, true, false, &a, &vtext, &vlen, err);
  csr_bbuf_release (&a.out);
  csr_bbuf_release (&a.err);
  csr_outseq_release (&a.seq);
  if (rc < 0)
    return -1;
  csr_gate_verdict_parse (vtext, vlen, v);
  return 0;
}

/* Run only the gate on CODE, in a jail like an attempt's: *V gets the verdict. */
static int
gate_check (const struct csr_loop_opts *o, const char *code, struct csr_gate_verdict *v,
            csr_error **err)
{
  return gate_only (o, code, false, v, err);
}

/* Why the gate refused CODE, in one line for the model (static buffer). */
static const char *
gate_refusal (const struct csr_gate_verdict *v)
{
  static __thread char buf[400];
  if (v->outcome == CSR_GATE_SYNTAX_ERROR)
    snprintf (buf, sizeof buf, "it does not parse: line %d: %s", v->line,
              v->message ? v->message : "syntax error");
  else if (v->outcome == CSR_GATE_BLOCKED && v->n_violations > 0)
    snprintf (buf, sizeof buf, "the static safety gate blocked it: line %d: %s (rule %s)",
              v->violations[0].line, v->violations[0].message ? v->violations[0].message : "",
              v->violations[0].rule ? v->violations[0].rule : "?");
  else
    snprintf (buf, sizeof buf, "the gate gave no verdict: %s",
              v->message ? v->message : "unknown reason");
  return buf;
}

static bool
same_code (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  while (la > 0 && (a[la - 1] == '\n' || a[la - 1] == ' ' || a[la - 1] == '\t'))
    la--;
  while (lb > 0 && (b[lb - 1] == '\n' || b[lb - 1] == ' ' || b[lb - 1] == '\t'))
    lb--;
  return la == lb && memcmp (a, b, la) == 0;
}

/* Ask the model: up to o->llm->retries replies; one without code, the
 * unchanged program or one the gate refuses is discarded (and the next
 * request says why).  Returns 1 with *P filled, 0 with *WHY, -1 on error. */
static int
heal_llm (const struct csr_loop_opts *o, const char *code, const struct csr_diagnosis *d,
          const struct csr_gate_verdict *v, struct csr_patch *p, const char **why, csr_error **err)
{
  static __thread char whybuf[512];
  const struct csr_llm_config *c = o->llm;
  const char *rejected = NULL;
  char rejbuf[420];
  int requests = 0, discarded = 0;
  long in_tok = -1, out_tok = -1;
  double latency = 0;
  for (int k = 0; k < c->retries; k++)
    {
      cleanup_free char *user = csr_prompt_user (code, d, v, rejected);
      if (user == NULL)
        return csr_error_set (err, ENOMEM, "build the prompt");
      struct csr_llm_result res;
      memset (&res, 0, sizeof res);
      int rc = csr_llm_complete (c, o->llm_budget, csr_prompt_system, user, &res, err);
      requests += res.requests;
      latency += res.latency_ms;
      if (res.input_tokens >= 0)
        in_tok = (in_tok < 0 ? 0 : in_tok) + res.input_tokens;
      if (res.output_tokens >= 0)
        out_tok = (out_tok < 0 ? 0 : out_tok) + res.output_tokens;
      if (rc <= 0)
        {
          /* One "provider: " prefix, naming the provider rather than its wire
           * format ("deepseek: HTTP 402: ...", not "openai: ..."). */
          const char *w = res.why ? res.why : "no reply";
          const char *names[] = { c->provider->name, csr_llm_wire_name (c->provider->wire) };
          for (size_t n = 0; n < 2; n++)
            {
              size_t nl = strlen (names[n]);
              if (strncmp (w, names[n], nl) == 0 && w[nl] == ':' && w[nl + 1] == ' ')
                {
                  w += nl + 2;
                  break;
                }
            }
          snprintf (whybuf, sizeof whybuf, "%s: %s", c->provider->name, w);
          *why = whybuf;
          csr_llm_result_release (&res);
          return rc;
        }
      bool fenced = true;
      char *fixed = csr_extract_code_ex (res.text, strlen (res.text), &fenced);
      cleanup_free char *model_used = steal_pointer (&res.model);
      csr_llm_result_release (&res);
      if (fixed == NULL)
        return csr_error_set (err, ENOMEM, "copy the reply");
      const char *bad = NULL;
      struct csr_gate_verdict gv;
      memset (&gv, 0, sizeof gv);
      if (fixed[0] == '\0')
        bad = "no code in the reply";
      else if (same_code (fixed, code))
        bad = "the reply was the unchanged program";
      else if ((bad = csr_patch_problem (code, fixed, o->max_code)) == NULL)
        {
          if (gate_check (o, fixed, &gv, err) < 0)
            {
              free (fixed);
              return -1;
            }
          if (gv.outcome == CSR_GATE_SYNTAX_ERROR && !fenced)
            {
              /* No ``` block and the text is not Python: prose, not a
               * patch that fails to parse. */
              snprintf (rejbuf, sizeof rejbuf,
                        "no code in the reply (no ``` block, and the text is not Python: line "
                        "%d: %s)",
                        gv.line, gv.message ? gv.message : "syntax error");
              bad = rejbuf;
            }
          else if (gv.outcome != CSR_GATE_PASS)
            bad = gate_refusal (&gv);
        }
      if (bad)
        {
          if (bad != rejbuf)
            snprintf (rejbuf, sizeof rejbuf, "%s", bad);
          rejected = rejbuf;
          discarded++;
          csr_gate_verdict_release (&gv);
          free (fixed);
          continue;
        }
      csr_gate_verdict_release (&gv);
      memset (p, 0, sizeof *p);
      p->code = fixed;
      p->rules = strdup ("llm");
      p->source = strdup ("llm");
      p->diff = csr_unified_diff (code, fixed, "snippet.py");
      p->provider = strdup (c->provider->name);
      p->model = strdup (c->model);
      p->model_used = steal_pointer (&model_used);
      p->requests = requests;
      p->discarded = discarded;
      p->input_tokens = in_tok;
      p->output_tokens = out_tok;
      p->latency_ms = latency;
      if (!p->rules || !p->source || !p->diff || !p->provider || !p->model)
        return csr_error_set (err, ENOMEM, "record the patch");
      return 1;
    }
  snprintf (whybuf, sizeof whybuf, "%s gave no usable patch in %d %s (last: %s)", c->provider->name,
            c->retries, c->retries == 1 ? "reply" : "replies", rejected ? rejected : "none");
  *why = whybuf;
  return 0;
}

/* ---- local healing of code that did not parse (issue 16) */
/* The local patch P of CODE fixed a syntax error (pasted code, Python 2):
 * the gate checks the patched code now (it does not run it: the next
 * attempt does), and the static fixes its verdict allows (missing imports,
 * one-edit typos, Python 2 builtins) join the same patch -- one attempt
 * instead of two.  A gate that can't run, or finds nothing to heal, leaves P
 * as it is.  -1 only on ENOMEM. */
static int
heal_local_again (const struct csr_loop_opts *o, const char *code, struct csr_patch *p,
                  csr_error **err)
{
  /* The gate only: the patched code runs in the next attempt, not here
   * (it ran here once, hidden, its output streamed live -- in a sandbox its
   * side effects would stay; fixed on both branches, issues 15 and 17). */
  struct csr_gate_verdict gv;
  memset (&gv, 0, sizeof gv);
  csr_error *gerr = NULL;
  if (gate_only (o, p->code, true, &gv, &gerr) < 0)
    {
      csr_error_freep (&gerr);
      return 1;
    }
  struct csr_patch q;
  int rc = gv.outcome == CSR_GATE_BLOCKED
               ? csr_heal_local (p->code, NULL, &gv, o->heal, o->base->jail.rootfs_dir, &q, err)
               : 0;
  csr_gate_verdict_release (&gv);
  if (rc <= 0)
    return rc < 0 ? -1 : 1;
  char *rules = NULL, *diff = csr_unified_diff (code, q.code, "snippet.py");
  if (diff == NULL || asprintf (&rules, "%s,%s", p->rules, q.rules) < 0)
    {
      free (diff);
      csr_patch_release (&q);
      return csr_error_set (err, ENOMEM, "heal: out of memory");
    }
  free (p->code);
  free (p->rules);
  free (p->diff);
  p->code = steal_pointer (&q.code);
  p->rules = rules;
  p->diff = diff;
  csr_patch_release (&q);
  return 1;
}
/* ---- end of issue 16's block */

/* Try local rules, then the LLM, then the patch command.  Returns 1 with *p
 * filled, 0 with *why set, -1 on a csrun error. */
static int
heal (const struct csr_loop_opts *o, int attempt, const char *code, const struct csr_diagnosis *d,
      const struct csr_gate_verdict *v, const struct csr_attempt *a, struct csr_patch *p,
      const char **why, csr_error **err)
{
  *why = "no local rule applies, and no LLM or --patch-cmd is configured";
  if (o->no_heal_why)
    {
      *why = o->no_heal_why;
      return 0;
    }
  if (d->error_type && strcmp (d->error_type, "ExitStatus") == 0)
    {
      /* sys.exit (N) / os._exit (N) without a traceback is what the snippet
       * meant: no rule, model or --patch-cmd is asked to undo it. */
      *why = "the snippet exited with a status of its own choosing (no traceback): not healed";
      return 0;
    }
  if (o->heal)
    {
      int rc = csr_heal_local (code, d, v, o->heal, o->base->jail.rootfs_dir, p, err);
      if (rc > 0 && v && v->outcome == CSR_GATE_SYNTAX_ERROR)
        rc = heal_local_again (o, code, p, err);
      if (rc != 0)
        return rc;
    }
  if (o->llm && o->llm->provider)
    {
      int rc = heal_llm (o, code, d, v, p, why, err);
      if (rc != 0 || o->patch_cmd == NULL)
        return rc;
    }
  if (o->patch_cmd == NULL)
    return 0;
  char *fixed = NULL;
  struct csr_patchcmd_input in = {
    .code = code, .diagnosis = d, .attempt = attempt, .gate = v, .out = &a->out, .err = &a->err
  };
  int rc = csr_patchcmd_run_ex (o->patch_cmd, o->patch_timeout_s, &in, &fixed, why, err);
  const char *bad = rc > 0 ? csr_patch_problem (code, fixed, o->max_code) : NULL;
  if (bad)
    {
      free (fixed);
      *why = bad;
      rc = 0;
    }
  if (rc <= 0)
    {
      if (rc == 0 && *why)
        {
          static __thread char buf[240];
          snprintf (buf, sizeof buf, "--patch-cmd gave no patch: %s", *why);
          *why = buf;
        }
      return rc;
    }
  memset (p, 0, sizeof *p);
  p->code = fixed;
  p->rules = strdup ("patch-cmd");
  p->source = strdup ("patch-cmd");
  p->diff = csr_unified_diff (code, fixed, "snippet.py");
  return 1;
}

static bool
from_patch_cmd (const struct csr_loop *l, int i)
{
  return i > 0 && l->patches[i - 1].source
         && (strcmp (l->patches[i - 1].source, "patch-cmd") == 0
             || strcmp (l->patches[i - 1].source, "llm") == 0);
}

/* Blocked only because names heal.conf knows are undefined (a fix may follow). */
static bool
only_undefined_names (const struct csr_gate_verdict *v)
{
  if (v->outcome != CSR_GATE_BLOCKED || v->n_violations == 0)
    return false;
  for (size_t i = 0; i < v->n_violations; i++)
    if (v->violations[i].rule == NULL || strcmp (v->violations[i].rule, "undefined-name") != 0)
      return false;
  return true;
}

/* The policy for the gate.  WITH_NAMES passes the names heal.conf can import,
 * so the gate blocks on them before anything runs (pointless when no attempt
 * would follow). */
static char *
policy_json (const struct csr_loop_opts *o, bool with_names, bool run, csr_error **err)
{
  const char *names[512];
  size_t n = 0;
  for (size_t i = 0; with_names && o->heal && i < o->heal->n_imports && n < 512; i++)
    names[n++] = o->heal->imports[i].name;
  /* heal.conf's py2-name: table too (xrange...: renamed before anything runs). */
  for (size_t i = 0; with_names && o->heal && i < o->heal->n_maps && n < 512; i++)
    if (o->heal->maps[i].kind == CSR_MAP_PY2_NAME)
      names[n++] = o->heal->maps[i].a;
  /* and the first names of its foreign-call: table (console of console.log) */
  static __thread char roots[64][32];
  size_t n_roots = 0;
  for (size_t i = 0; with_names && o->heal && i < o->heal->n_maps && n < 512 && n_roots < 64; i++)
    if (o->heal->maps[i].kind == CSR_MAP_FOREIGN_CALL
        || o->heal->maps[i].kind == CSR_MAP_FOREIGN_NAME)
      {
        size_t l = strcspn (o->heal->maps[i].a, ".");
        if (l >= sizeof roots[0])
          continue;
        memcpy (roots[n_roots], o->heal->maps[i].a, l);
        roots[n_roots][l] = '\0';
        names[n++] = roots[n_roots++];
      }
  char *json = NULL;
  const struct csr_launcher *L = o->capture.launcher;
  int source_fd = L && L->source_on_fd ? CSR_LAUNCH_FD_SOURCE : -1;
  if (csr_gate_policy_to_json_fd (o->policy, run, names, n, source_fd, &json, err) < 0)
    return NULL;
  return json;
}

/* Judge attempt I (run, its verdict V parsed): set its diagnosis D and the
 * run's status.  True when the loop stops here (a timeout, no verdict, a
 * check, a pass, a blocked patch); false when the attempt is to be healed. */
static bool
judge_attempt (struct csr_loop *l, const struct csr_loop_opts *o, int i, const char *cur)
{
  struct csr_run_result *r = &l->result;
  struct csr_attempt *a = &l->attempts[i];
  struct csr_gate_verdict *v = &l->verdicts[i];
  struct csr_diagnosis *d = &l->diagnoses[i];
  if (a->timed_out)
    {
      diagnose_run (d, a, cur);
      a->diagnosis = d;
      r->status = CSR_STATUS_TIMEOUT;
      return true;
    }
  if (v->outcome == CSR_GATE_FAILED)
    {
      /* No verdict is never a pass; the snippet did not run. */
      diagnose_gate (d, v, cur);
      a->diagnosis = d;
      r->status = CSR_STATUS_ERROR;
      if (asprintf (&l->error, "the gate gave no usable verdict: %s",
                    v->message ? v->message : "unknown reason")
          < 0)
        l->error = NULL;
      r->error = l->error;
      return true;
    }
  if (o->check_only)
    {
      r->status = v->outcome == CSR_GATE_PASS      ? CSR_STATUS_OK
                  : v->outcome == CSR_GATE_BLOCKED ? CSR_STATUS_BLOCKED
                                                   : CSR_STATUS_FAILED;
      if (v->outcome != CSR_GATE_PASS)
        {
          diagnose_gate (d, v, cur);
          a->diagnosis = d;
        }
      return true;
    }
  enum csr_status fail_status = CSR_STATUS_FAILED;
  if (v->outcome != CSR_GATE_PASS)
    {
      diagnose_gate (d, v, cur);
      if (v->outcome == CSR_GATE_BLOCKED)
        {
          fail_status = CSR_STATUS_BLOCKED;
          if (from_patch_cmd (l, i) && !only_undefined_names (v))
            {
              a->diagnosis = d;
              a->patch_none = strcmp (l->patches[i - 1].source, "llm") == 0
                                  ? "the patch from the LLM was blocked by the gate"
                                  : "the patch from --patch-cmd was blocked by the gate";
              r->status = CSR_STATUS_BLOCKED;
              return true;
            }
        }
    }
  else if (a->exited && a->exit_code == 0)
    {
      if (o->scan)
        {
          a->scanned = true;
          const char *pat = NULL;
          char *line = NULL;
          cleanup_free char *out = marked_contents (&a->out);
          cleanup_free char *errt = marked_contents (&a->err);
          if ((out && csr_scan_match (o->scan, out, strlen (out), &pat, &line))
              || (errt && csr_scan_match (o->scan, errt, strlen (errt), &pat, &line)))
            {
              a->silent_failure = true;
              a->silent_pattern = pat;
              a->silent_line = l->silent_lines[i] = line;
            }
        }
      if (!a->silent_failure)
        {
          r->status = l->patched ? CSR_STATUS_HEALED : CSR_STATUS_OK;
          return true;
        }
      cleanup_free char *msg = NULL;
      if (asprintf (&msg, "exit status 0, but the output matches /%s/: %s", a->silent_pattern,
                    a->silent_line)
          < 0)
        msg = NULL;
      csr_diagnosis_set (d, "SilentFailure", msg ? msg : "silent failure", 0, cur);
    }
  else
    {
      diagnose_run (d, a, cur);
      hint_network (d, o);
    }
  a->diagnosis = d;
  /* ModuleNotFoundError: the Debian package that has it (--with); the first hint wins. */
  if (d->hint == NULL && l->hints[i] == NULL && (l->hints[i] = csr_module_hint (d, NULL)) != NULL)
    d->hint = l->hints[i];
  r->status = fail_status;
  return false;
}

/* The signal that reached csrun and the capture loop did not see (it came
 * between attempts, during healing, or as the jail ended), or 0. */
static int
pending_interrupt (const struct csr_loop_opts *o)
{
  int fd = o->capture.interrupt_fd;
  struct pollfd p = { .fd = fd, .events = POLLIN };
  if (fd < 0 || poll (&p, 1, 0) != 1 || !(p.revents & POLLIN))
    return 0;
  unsigned char sig = 0;
  if (read (fd, &sig, 1) != 1 || sig == 0)
    sig = SIGINT;
  return sig;
}

/* Stop before the next attempt when a signal came. */
static bool
interrupted_before (struct csr_loop *l, const struct csr_loop_opts *o)
{
  int sig = pending_interrupt (o);
  if (sig == 0)
    return false;
  l->result.status = CSR_STATUS_INTERRUPTED;
  l->result.interrupt_signal = sig;
  return true;
}

int
csr_loop_run (struct csr_loop *l, const char *code, size_t len,
              const struct csr_loop_opts *caller_o, csr_error **err)
{
  /* The jail an attempt whose code did not run left waiting (issue 17). */
  __attribute__ ((cleanup (drop_kept))) struct csr_gated_jail *kept = NULL;
  struct csr_loop_opts own = *caller_o;
  const struct csr_launcher *L = own.capture.launcher;
  own.kept = L == NULL || L->reuse_unrun ? &kept : NULL;
  const struct csr_loop_opts *o = &own;
  struct csr_run_result *r = &l->result;
  r->attempts = l->attempts;
  r->max_attempts = o->check_only ? 1 : o->max_attempts;
  cleanup_free char *pjson = policy_json (o, r->max_attempts > 1, !o->check_only, err);
  if (pjson == NULL)
    return -1;
  l->codes[0] = strndup (code, len);
  if (l->codes[0] == NULL)
    return csr_error_set (err, ENOMEM, "copy the snippet");

  r->status = CSR_STATUS_FAILED;
  for (int i = 0; i < r->max_attempts; i++)
    {
      const char *cur = l->codes[i];
      struct csr_attempt *a = &l->attempts[i];
      if (interrupted_before (l, o))
        break;
      if (i > 0 && o->on_next_attempt)
        o->on_next_attempt (o->on_next_attempt_data, &l->attempts[i - 1], i + 1);
      a->number = i + 1;
      csr_sha256_buf (cur, strlen (cur), a->code_sha256, NULL);

      cleanup_free char **argv = gate_argv (o, pjson, o->args, o->n_args);
      if (argv == NULL)
        return csr_error_set (err, ENOMEM, "allocate argv");
      struct csr_file snippet;
      struct jail_snippet spec = gated_spec (o, argv, cur, &snippet);
      cleanup_free char *vtext = NULL;
      size_t vlen = 0;
      struct csr_launch_req lr = launch_req (&spec, cur, pjson, o->args, o->n_args);
      bool keep = may_keep (o, i);
      if (run_gated (o, &lr, &o->capture, keep, keep, a, &vtext, &vlen, err) < 0)
        {
          csr_bbuf_release (&a->out);
          csr_bbuf_release (&a->err);
          csr_outseq_release (&a->seq);
          if (i == 0)
            return -1;
          /* A later attempt could not start: keep what we have, report it. */
          r->status = CSR_STATUS_ERROR;
          l->error = strdup (csr_error_text (*err));
          r->error = l->error;
          csr_error_freep (err);
          return 0;
        }
      r->n_attempts = (size_t)i + 1;
      struct csr_gate_verdict *v = &l->verdicts[i];
      csr_gate_verdict_parse (vtext, vlen, v);
      a->gate = v;
      struct csr_diagnosis *d = &l->diagnoses[i];

      if (!a->interrupted)
        a->interrupted = pending_interrupt (o); /* e.g. Ctrl-C also ended the snippet */
      if (a->interrupted)
        {
          /* Stopped by a signal to csrun: no diagnosis, no healing. */
          r->status = CSR_STATUS_INTERRUPTED;
          r->interrupt_signal = a->interrupted;
          break;
        }
      if (judge_attempt (l, o, i, cur))
        break;
      if (i + 1 >= r->max_attempts)
        {
          a->patch_none = "the attempt limit was reached";
          break;
        }
      if (o->capture.launcher && o->capture.launcher->rerun_unrun_only
          && v->outcome == CSR_GATE_PASS)
        {
          /* issue 15: a session's cell that ran changed the session's state;
           * running a healed version would do it twice. */
          a->patch_none = "the cell ran (its effects stay in the session): a healed cell is run "
                          "again only when the gate stopped it or it did not compile";
          break;
        }
      const char *why = NULL;
      int64_t h0 = csr_mono_ns ();
      int rc = heal (o, i + 1, cur, d, v, a, &l->patches[i], &why, err);
      a->healing = true;
      a->heal_ms = (uint64_t)((csr_mono_ns () - h0) / 1000000);
      if (rc < 0)
        {
          r->status = CSR_STATUS_ERROR;
          l->error = strdup (csr_error_text (*err));
          r->error = l->error;
          csr_error_freep (err);
          break;
        }
      if (rc == 0 && only_undefined_names (v))
        {
          /* heal.conf knows the names but none of its entries fits how they
           * are used (or the module is not in the rootfs): run the code as
           * it is, with the gate no longer blocking on them. */
          free (pjson);
          pjson = policy_json (o, false, !o->check_only, err);
          if (pjson == NULL)
            return -1;
          a->patch_none = "no heal.conf entry fits these names: the next attempt runs the code "
                          "as it is";
          l->codes[i + 1] = strdup (cur);
          if (l->codes[i + 1] == NULL)
            return csr_error_set (err, ENOMEM, "copy the snippet");
          continue;
        }
      if (rc == 0)
        {
          a->patch_none = why;
          break;
        }
      a->patch = &l->patches[i];
      l->patched = true;
      l->codes[i + 1] = xstrdup (l->patches[i].code);
      if (l->codes[i + 1] == NULL)
        return csr_error_set (err, ENOMEM, "copy the patch");
    }
  if (r->n_attempts > 0)
    {
      const struct csr_attempt *last = &l->attempts[r->n_attempts - 1];
      if (r->status != CSR_STATUS_OK && r->status != CSR_STATUS_HEALED)
        r->diagnosis = last->diagnosis;
      if (r->status == CSR_STATUS_HEALED)
        r->final_code = l->codes[r->n_attempts - 1];
    }
  return 0;
}

void
csr_loop_release (struct csr_loop *l)
{
  for (int i = 0; i < CSR_MAX_ATTEMPTS; i++)
    {
      csr_bbuf_release (&l->attempts[i].out);
      csr_bbuf_release (&l->attempts[i].err);
      csr_outseq_release (&l->attempts[i].seq);
      csr_gate_verdict_release (&l->verdicts[i]);
      csr_diagnosis_release (&l->diagnoses[i]);
      csr_patch_release (&l->patches[i]);
      free (l->silent_lines[i]);
      free (l->codes[i]);
      free (l->hints[i]);
    }
  free (l->error);
}
