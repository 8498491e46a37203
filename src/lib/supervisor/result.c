#include "config.h"
#include "result.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "../rootfs/layer.h"
#include "../util/cleanup.h"
#include "../util/utf8.h"

const char *
csr_status_name (enum csr_status s)
{
  switch (s)
    {
    case CSR_STATUS_OK:
      return "ok";
    case CSR_STATUS_HEALED:
      return "healed";
    case CSR_STATUS_FAILED:
      return "failed";
    case CSR_STATUS_BLOCKED:
      return "blocked";
    case CSR_STATUS_TIMEOUT:
      return "timeout";
    case CSR_STATUS_ERROR:
      return "error";
    case CSR_STATUS_INTERRUPTED:
      return "interrupted";
    }
  return "unknown";
}

static void
yajl_gen_freep (yajl_gen *g)
{
  if (*g)
    yajl_gen_free (*g);
}
#define cleanup_yajl_gen __attribute__ ((cleanup (yajl_gen_freep)))

/* Every generator call goes through these; the first failure is kept in
 * ST and later calls do nothing, so the writer reads straight through. */
struct writer
{
  yajl_gen g;
  yajl_gen_status st;
  int oom; /* a malloc of ours failed */
};

static void
check (struct writer *w, yajl_gen_status st)
{
  if (w->st == yajl_gen_status_ok)
    w->st = st;
}

static bool
ok (const struct writer *w)
{
  return w->st == yajl_gen_status_ok && !w->oom;
}

/* A string of LEN bytes, repaired to valid UTF-8 first if needed. */
static void
w_strn (struct writer *w, const char *s, size_t len)
{
  if (!ok (w))
    return;
  if (csr_utf8_valid (s, len))
    {
      check (w, yajl_gen_string (w->g, (const unsigned char *)s, len));
      return;
    }
  size_t n = 0;
  cleanup_free char *fixed = csr_utf8_sanitize (s, len, &n);
  if (fixed == NULL)
    {
      w->oom = 1;
      return;
    }
  check (w, yajl_gen_string (w->g, (const unsigned char *)fixed, n));
}

static void
w_str (struct writer *w, const char *s)
{
  w_strn (w, s, strlen (s));
}

static void
w_key (struct writer *w, const char *key)
{
  if (ok (w))
    check (w, yajl_gen_string (w->g, (const unsigned char *)key, strlen (key)));
}

/* One step without a value: a map's or an array's start or end, null. */
static void
w_step (struct writer *w, yajl_gen_status (*step) (yajl_gen))
{
  if (ok (w))
    check (w, step (w->g));
}

static void
w_open (struct writer *w)
{
  w_step (w, yajl_gen_map_open);
}

static void
w_close (struct writer *w)
{
  w_step (w, yajl_gen_map_close);
}

static void
w_array_open (struct writer *w)
{
  w_step (w, yajl_gen_array_open);
}

static void
w_array_close (struct writer *w)
{
  w_step (w, yajl_gen_array_close);
}

static void
w_null (struct writer *w)
{
  w_step (w, yajl_gen_null);
}

static void
w_bool (struct writer *w, bool b)
{
  if (ok (w))
    check (w, yajl_gen_bool (w->g, b));
}

static void
w_int (struct writer *w, long long v)
{
  if (ok (w))
    check (w, yajl_gen_integer (w->g, v));
}

/* yajl_gen_integer takes a long long: larger values are clamped. */
static void
w_u64 (struct writer *w, uint64_t v)
{
  w_int (w, v > (uint64_t)LLONG_MAX ? LLONG_MAX : (long long)v);
}

/* The shortest "%g" form that reads back as V, always with a '.', 'e' or both
 * so a reader sees a floating-point number ("1.0", "0.1", "1.5", "1e+300").
 * Formatted under the C locale: a front end that called setlocale() must not
 * turn the decimal point into a comma.  Not finite -> null. */
static void
w_double (struct writer *w, double v)
{
  if (!ok (w))
    return;
  if (!isfinite (v))
    {
      w_null (w);
      return;
    }
  char buf[64];
  locale_t c_loc = newlocale (LC_NUMERIC_MASK, "C", (locale_t)0);
  locale_t old = c_loc != (locale_t)0 ? uselocale (c_loc) : (locale_t)0;
  for (int prec = 15; prec <= 17; prec++)
    {
      snprintf (buf, sizeof buf, "%.*g", prec, v);
      if (strtod (buf, NULL) == v)
        break;
    }
  if (c_loc != (locale_t)0)
    {
      uselocale (old);
      freelocale (c_loc);
    }
  else
    {
      /* No C locale object: fix up the current locale's decimal point. */
      const char *dp = localeconv ()->decimal_point;
      char *at = (dp && *dp && strcmp (dp, ".") != 0) ? strstr (buf, dp) : NULL;
      if (at != NULL)
        {
          size_t dl = strlen (dp);
          *at = '.';
          memmove (at + 1, at + dl, strlen (at + dl) + 1);
        }
    }
  if (strspn (buf, "-0123456789") == strlen (buf))
    strcat (buf, ".0");
  check (w, yajl_gen_number (w->g, buf, strlen (buf)));
}

/* The signal SIG as a string: "SIGKILL" for 9; "SIG<n>" for a number glibc
 * has no name for. */
static void
w_signal (struct writer *w, int sig)
{
  const char *abbrev = NULL;
#if defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 32)
  abbrev = sigabbrev_np (sig);
#endif
#endif
  char buf[32];
  if (abbrev != NULL)
    snprintf (buf, sizeof buf, "SIG%s", abbrev);
  else
    snprintf (buf, sizeof buf, "SIG%d", sig);
  w_str (w, buf);
}

/* One captured stream: head, then the dropped marker if anything was cut,
 * then the tail, repaired to valid UTF-8 as one string (so a character
 * split between head and tail survives when nothing was dropped). */
static void
w_stream (struct writer *w, const char *name, const struct csr_bbuf *b)
{
  if (!ok (w))
    return;
  uint64_t dropped = csr_bbuf_dropped (b);
  char marker[80] = "";
  if (dropped > 0)
    snprintf (marker, sizeof marker, "\n[... csrun: %" PRIu64 " bytes dropped ...]\n", dropped);
  size_t mlen = strlen (marker);

  size_t tail_len = 0;
  cleanup_free char *tail = csr_bbuf_tail (b, &tail_len);
  size_t n = b->head_len + mlen + tail_len;
  cleanup_free char *text = tail ? malloc (n + 1) : NULL;
  if (text == NULL)
    {
      w->oom = 1;
      return;
    }
  if (b->head_len > 0)
    memcpy (text, b->head, b->head_len);
  memcpy (text + b->head_len, marker, mlen);
  if (tail_len > 0)
    memcpy (text + b->head_len + mlen, tail, tail_len);
  text[n] = '\0';

  char key[64];
  w_key (w, name);
  w_strn (w, text, n);
  snprintf (key, sizeof key, "%s_bytes", name);
  w_key (w, key);
  w_u64 (w, b->total);
  snprintf (key, sizeof key, "%s_dropped_bytes", name);
  w_key (w, key);
  w_u64 (w, dropped);
  snprintf (key, sizeof key, "%s_truncated", name);
  w_key (w, key);
  w_bool (w, dropped > 0);
}

/* issue 14: the attempt's output in the order it was written (see
 * outseq.h): [{"stream","text"} ..., {"stream","dropped_bytes"}]. */
struct order_ctx
{
  struct writer *w;
};

static void
w_order_piece (void *data, enum csr_stream s, const char *bytes, uint64_t len)
{
  struct writer *w = ((struct order_ctx *)data)->w;
  w_open (w);
  w_key (w, "stream");
  w_str (w, s == CSR_STREAM_OUT ? "stdout" : "stderr");
  if (bytes)
    {
      w_key (w, "text");
      w_strn (w, bytes, (size_t)len);
    }
  else
    {
      w_key (w, "dropped_bytes");
      w_u64 (w, len);
    }
  w_close (w);
}

static void
w_output_order (struct writer *w, const struct csr_attempt *a)
{
  if (a->seq.head == NULL)
    return;
  w_key (w, "output");
  w_array_open (w);
  struct order_ctx c = { w };
  if (csr_outseq_walk (&a->seq, &a->out, &a->err, w_order_piece, &c) < 0)
    w->oom = 1;
  w_array_close (w);
}

static void
w_str_or_null (struct writer *w, const char *s)
{
  if (s)
    w_str (w, s);
  else
    w_null (w);
}

static void
w_diagnosis (struct writer *w, const struct csr_diagnosis *d)
{
  w_key (w, "diagnosis");
  w_open (w);
  w_key (w, "error_type");
  w_str_or_null (w, d->error_type);
  w_key (w, "message");
  w_str_or_null (w, d->message);
  w_key (w, "line");
  if (d->line > 0)
    w_int (w, d->line);
  else
    w_null (w);
  w_key (w, "context");
  w_str_or_null (w, d->context);
  if (d->hint)
    {
      w_key (w, "hint");
      w_str (w, d->hint);
    }
  w_close (w);
}

static void
w_gate (struct writer *w, const struct csr_gate_verdict *v)
{
  w_key (w, "gate");
  w_open (w);
  w_key (w, "verdict");
  w_str (w, csr_gate_outcome_name (v->outcome));
  if (v->outcome == CSR_GATE_FAILED || v->outcome == CSR_GATE_SYNTAX_ERROR)
    {
      w_key (w, "message");
      w_str_or_null (w, v->message);
    }
  if (v->outcome == CSR_GATE_SYNTAX_ERROR)
    {
      w_key (w, "line");
      w_int (w, v->line);
      w_key (w, "col");
      w_int (w, v->col);
      w_key (w, "text");
      w_str_or_null (w, v->text);
    }
  w_key (w, "violations");
  w_array_open (w);
  for (size_t i = 0; i < v->n_violations; i++)
    {
      w_open (w);
      w_key (w, "rule");
      w_str_or_null (w, v->violations[i].rule);
      w_key (w, "line");
      w_int (w, v->violations[i].line);
      w_key (w, "col");
      w_int (w, v->violations[i].col);
      w_key (w, "message");
      w_str_or_null (w, v->violations[i].message);
      w_close (w);
    }
  w_array_close (w);
  if (v->n_undefined > 0)
    {
      w_key (w, "undefined_names");
      w_array_open (w);
      for (size_t i = 0; i < v->n_undefined; i++)
        {
          w_open (w);
          w_key (w, "name");
          w_str_or_null (w, v->undefined[i].name);
          w_key (w, "line");
          w_int (w, v->undefined[i].line);
          w_key (w, "usage");
          w_str_or_null (w, v->undefined[i].usage);
          if (v->undefined[i].suggest)
            {
              w_key (w, "suggest");
              w_str_or_null (w, v->undefined[i].suggest);
            }
          w_close (w);
        }
      w_array_close (w);
    }
  w_close (w);
}

/* --with: "layer": {key, digest, dir, built, rebuilt_why, asked,
 * packages: [{name, version, arch}], in_base: N}. */
static void
w_layer (struct writer *w, const struct csr_layer *l)
{
  w_key (w, "layer");
  w_open (w);
  w_key (w, "key");
  w_str (w, l->key);
  w_key (w, "digest");
  w_str (w, l->digest);
  w_key (w, "dir");
  w_str (w, l->dir);
  w_key (w, "built");
  w_bool (w, l->built_now);
  w_key (w, "rebuilt_why");
  w_str_or_null (w, l->rebuilt_why);
  w_key (w, "asked");
  w_array_open (w);
  for (size_t i = 0; i < l->n_asked; i++)
    w_str (w, l->asked[i]);
  w_array_close (w);
  w_key (w, "packages");
  w_array_open (w);
  size_t in_base = 0;
  for (size_t i = 0; i < l->n_pkgs; i++)
    {
      if (l->pkgs[i].in_base)
        {
          in_base++;
          continue;
        }
      w_open (w);
      w_key (w, "name");
      w_str (w, l->pkgs[i].name);
      w_key (w, "version");
      w_str (w, l->pkgs[i].version);
      w_key (w, "arch");
      w_str (w, l->pkgs[i].arch);
      w_close (w);
    }
  w_array_close (w);
  w_key (w, "in_base");
  w_u64 (w, in_base);
  w_close (w);
}

static void
w_attempt (struct writer *w, const struct csr_attempt *a)
{
  w_open (w);
  w_key (w, "attempt");
  w_int (w, a->number);
  w_key (w, "code_sha256");
  size_t dlen = strnlen (a->code_sha256, sizeof a->code_sha256);
  if (dlen > 0)
    w_strn (w, a->code_sha256, dlen);
  else
    w_null (w);
  w_key (w, "exit_code");
  if (a->exited)
    w_int (w, a->exit_code);
  else
    w_null (w);
  w_key (w, "signal");
  if (a->signal != 0)
    w_signal (w, a->signal);
  else
    w_null (w);
  w_key (w, "timed_out");
  w_bool (w, a->timed_out);
  w_key (w, "duration_ms");
  w_u64 (w, a->duration_ms);
  w_key (w, "cpu_ms");
  w_u64 (w, a->cpu_ms);
  w_key (w, "peak_memory_kib");
  w_u64 (w, a->peak_memory_kib);
  w_key (w, "oom_killed");
  w_bool (w, a->oom_killed);
  w_stream (w, "stdout", &a->out);
  w_stream (w, "stderr", &a->err);
  w_output_order (w, a);
  if (a->stdin_given)
    {
      w_key (w, "stdin_consumed_bytes");
      w_u64 (w, a->stdin_consumed);
    }
  if (a->interrupted)
    {
      w_key (w, "interrupted_by");
      w_signal (w, a->interrupted);
    }
  if (a->reused_jail)
    {
      w_key (w, "reused_jail");
      w_bool (w, true);
    }
  if (a->warm_jail)
    {
      w_key (w, "warm_jail");
      w_bool (w, true);
    }
  if (a->warm_refused[0])
    {
      w_key (w, "warm_refused");
      w_str (w, a->warm_refused);
    }
  if (a->gate)
    w_gate (w, a->gate);
  if (a->scanned)
    {
      w_key (w, "silent_failure");
      w_open (w);
      w_key (w, "detected");
      w_bool (w, a->silent_failure);
      w_key (w, "pattern");
      w_str_or_null (w, a->silent_failure ? a->silent_pattern : NULL);
      w_key (w, "line");
      w_str_or_null (w, a->silent_failure ? a->silent_line : NULL);
      w_close (w);
    }
  if (a->diagnosis)
    w_diagnosis (w, a->diagnosis);
  if (a->patch)
    {
      w_key (w, "patch");
      w_open (w);
      w_key (w, "source");
      w_str_or_null (w, a->patch->source);
      w_key (w, "rules");
      w_str_or_null (w, a->patch->rules);
      w_key (w, "diff");
      w_str_or_null (w, a->patch->diff);
      if (a->patch->provider)
        {
          const struct csr_patch *p = a->patch;
          w_key (w, "llm");
          w_open (w);
          w_key (w, "provider");
          w_str (w, p->provider);
          w_key (w, "model");
          w_str_or_null (w, p->model);
          w_key (w, "model_used");
          w_str_or_null (w, p->model_used);
          w_key (w, "requests");
          w_int (w, p->requests);
          w_key (w, "discarded_replies");
          w_int (w, p->discarded);
          w_key (w, "input_tokens");
          if (p->input_tokens >= 0)
            w_int (w, p->input_tokens);
          else
            w_null (w);
          w_key (w, "output_tokens");
          if (p->output_tokens >= 0)
            w_int (w, p->output_tokens);
          else
            w_null (w);
          w_key (w, "latency_ms");
          w_u64 (w, p->latency_ms > 0 ? (uint64_t)(p->latency_ms + 0.5) : 0);
          w_close (w);
        }
      w_close (w);
    }
  else if (a->patch_none)
    {
      w_key (w, "no_patch");
      w_str (w, a->patch_none);
    }
  if (a->healing)
    {
      w_key (w, "heal_ms");
      w_u64 (w, a->heal_ms);
    }
  w_close (w);
}

static void
w_limits (struct writer *w, const struct csr_limits *l)
{
  w_key (w, "limits");
  w_open (w);
  w_key (w, "mechanism");
  w_str (w, l->mechanism ? l->mechanism : "none");
  w_key (w, "memory_bytes");
  w_u64 (w, l->memory_bytes);
  w_key (w, "memory_enforced");
  w_bool (w, l->memory_enforced);
  w_key (w, "timeout_s");
  w_double (w, l->timeout_s);
  w_key (w, "max_output_bytes");
  w_u64 (w, l->max_output);
  w_key (w, "tmp_size_bytes");
  w_u64 (w, l->tmp_size);
  w_key (w, "nofile");
  w_u64 (w, l->nofile);
  w_key (w, "memory_limit_kind");
  w_str (w, !l->memory_enforced ? "none" : l->memory_by_rlimit ? "private-data" : "resident");
  w_key (w, "pids");
  w_u64 (w, l->pids);
  w_key (w, "pids_enforced");
  w_bool (w, l->pids_enforced);
  w_key (w, "cpus");
  w_double (w, (double)l->cpu_millis / 1000.0);
  w_key (w, "cpu_enforced");
  w_bool (w, l->cpu_enforced);
  w_key (w, "warning");
  w_str_or_null (w, l->warning);
  if (l->seccomp)
    {
      w_key (w, "seccomp");
      w_str (w, l->seccomp);
    }
  w_close (w);
}

static const char *
gen_status_text (yajl_gen_status st)
{
  switch (st)
    {
    case yajl_gen_status_ok:
      return "ok";
    case yajl_gen_keys_must_be_strings:
      return "a map key is not a string";
    case yajl_max_depth_exceeded:
      return "maximum nesting depth exceeded";
    case yajl_gen_in_error_state:
      return "generator in error state";
    case yajl_gen_generation_complete:
      return "document already complete";
    case yajl_gen_invalid_number:
      return "invalid number";
    case yajl_gen_no_buf:
      return "no buffer";
    default:
      /* yajl_gen_invalid_string (yajl >= 2.0.4) and anything newer. */
      return "invalid string";
    }
}

/* --in and --out: "inputs", "outputs_dir", "outputs", "outputs_skipped". */
static void
w_files (struct writer *w, const struct csr_files_report *f)
{
  if (f->n_inputs > 0)
    {
      w_key (w, "inputs");
      w_array_open (w);
      for (size_t i = 0; i < f->n_inputs; i++)
        {
          w_open (w);
          w_key (w, "path");
          w_str (w, f->inputs[i].path);
          w_key (w, "dest");
          w_str (w, f->inputs[i].dest);
          w_key (w, "size");
          w_u64 (w, f->inputs[i].size);
          w_close (w);
        }
      w_array_close (w);
    }
  if (f->out_dir == NULL)
    return;
  w_key (w, "outputs_dir");
  w_str (w, f->out_dir);
  w_key (w, "outputs");
  w_array_open (w);
  for (size_t i = 0; i < f->n_outputs; i++)
    {
      w_open (w);
      w_key (w, "path");
      w_str (w, f->outputs[i].path);
      w_key (w, "size");
      w_u64 (w, f->outputs[i].size);
      w_key (w, "sha256");
      w_str (w, f->outputs[i].sha256);
      w_close (w);
    }
  w_array_close (w);
  w_key (w, "outputs_skipped");
  w_array_open (w);
  for (size_t i = 0; i < f->n_skipped; i++)
    {
      w_open (w);
      w_key (w, "path");
      w_str (w, f->skipped[i].path);
      w_key (w, "reason");
      w_str (w, f->skipped[i].reason);
      w_close (w);
    }
  w_array_close (w);
}

/* issue 15: "sandbox", "session", "write_back". */
static void
w_sandbox (struct writer *w, const struct csr_sandbox_report *s)
{
  w_key (w, "sandbox");
  w_str (w, s->id);
  if (s->session)
    {
      w_key (w, "session");
      w_open (w);
      w_key (w, "name");
      w_str (w, s->session);
      w_key (w, "cell");
      w_int (w, s->cell);
      w_key (w, "started");
      w_bool (w, s->session_started);
      w_key (w, "lost");
      w_bool (w, s->session_lost);
      w_close (w);
    }
  if (s->path)
    {
      w_key (w, "write_back");
      w_open (w);
      w_key (w, "path");
      w_str (w, s->path);
      w_key (w, "written");
      w_bool (w, s->written);
      w_key (w, "reason");
      w_str_or_null (w, s->write_note);
      w_close (w);
    }
}

int
csr_result_to_json (const struct csr_run_result *r, char **out, size_t *len, csr_error **err)
{
  cleanup_yajl_gen yajl_gen g = yajl_gen_alloc (NULL);
  if (g == NULL)
    return csr_error_set (err, ENOMEM, "cannot generate the result JSON");
  /* Strings are repaired before they reach yajl; validation stays on as a
   * second guard (it would fail the call rather than emit invalid JSON). */
  yajl_gen_config (g, yajl_gen_beautify, 0);
  yajl_gen_config (g, yajl_gen_validate_utf8, 1);

  struct writer wr = { .g = g, .st = yajl_gen_status_ok, .oom = 0 };
  struct writer *w = &wr;

  w_open (w);
  w_key (w, "version");
  w_int (w, 1);
  w_key (w, "status");
  w_str (w, csr_status_name (r->status));
  if (r->error != NULL)
    {
      w_key (w, "error");
      w_str (w, r->error);
    }
  w_key (w, "duration_ms");
  w_u64 (w, r->duration_ms);
  if (r->file != NULL)
    {
      w_key (w, "file");
      w_str (w, r->file);
      w_key (w, "args");
      w_array_open (w);
      for (size_t i = 0; i < r->n_args; i++)
        w_str (w, r->args[i]);
      w_array_close (w);
      if (r->label != NULL)
        {
          w_key (w, "label");
          w_str (w, r->label);
        }
    }

  if (r->rootfs_dir != NULL)
    {
      w_key (w, "rootfs");
      w_open (w);
      w_key (w, "dir");
      w_str (w, r->rootfs_dir);
      w_key (w, "sha256");
      if (r->rootfs_sha256 != NULL)
        w_str (w, r->rootfs_sha256);
      else
        w_null (w);
      w_key (w, "unpacked");
      w_bool (w, r->rootfs_unpacked);
      w_close (w);
    }
  if (r->layer != NULL)
    w_layer (w, r->layer);
  if (r->rootfs_repaired_files > 0)
    {
      w_key (w, "rootfs_repaired");
      w_open (w);
      w_key (w, "files");
      w_u64 (w, r->rootfs_repaired_files);
      w_key (w, "first");
      w_str_or_null (w, r->rootfs_repaired_first);
      w_close (w);
    }

  w_limits (w, &r->limits);
  if (r->max_attempts > 0)
    {
      w_key (w, "max_attempts");
      w_int (w, r->max_attempts);
    }
  if (r->llm_provider)
    {
      w_key (w, "llm");
      w_open (w);
      w_key (w, "provider");
      w_str (w, r->llm_provider);
      w_key (w, "model");
      w_str_or_null (w, r->llm_model);
      w_key (w, "calls");
      w_int (w, r->llm_calls);
      w_key (w, "max_calls");
      w_int (w, r->llm_max_calls);
      w_close (w);
    }
  /* issue 14: the kept standard input, the signal that interrupted the run. */
  if (r->stdin_store)
    {
      w_key (w, "stdin");
      w_open (w);
      w_key (w, "bytes");
      w_u64 (w, r->stdin_store->len);
      w_key (w, "max_bytes");
      w_u64 (w, r->stdin_store->max);
      w_key (w, "truncated");
      w_bool (w, r->stdin_store->truncated);
      w_key (w, "spilled");
      w_bool (w, r->stdin_store->spill >= 0);
      w_close (w);
    }
  if (r->interrupt_signal)
    {
      w_key (w, "interrupted_by");
      w_signal (w, r->interrupt_signal);
    }
  if (r->diagnosis)
    w_diagnosis (w, r->diagnosis);
  if (r->final_code)
    {
      w_key (w, "final_code");
      w_str (w, r->final_code);
    }
  if (r->files)
    w_files (w, r->files);
  if (r->sandbox)
    w_sandbox (w, r->sandbox);

  w_key (w, "attempts");
  w_array_open (w);
  for (size_t i = 0; i < r->n_attempts; i++)
    w_attempt (w, &r->attempts[i]);
  w_array_close (w);
  w_close (w);

  if (wr.oom)
    return csr_error_set (err, ENOMEM, "cannot generate the result JSON");
  if (wr.st != yajl_gen_status_ok)
    return csr_error_set (err, 0, "cannot generate the result JSON: %s", gen_status_text (wr.st));

  const unsigned char *buf = NULL;
  size_t blen = 0;
  yajl_gen_status st = yajl_gen_get_buf (g, &buf, &blen);
  if (st != yajl_gen_status_ok)
    return csr_error_set (err, 0, "cannot generate the result JSON: %s", gen_status_text (st));

  char *doc = malloc (blen + 2);
  if (doc == NULL)
    return csr_error_set (err, ENOMEM, "cannot generate the result JSON");
  memcpy (doc, buf, blen);
  doc[blen] = '\n';
  doc[blen + 1] = '\0';
  *out = doc;
  if (len)
    *len = blen + 1;
  return 0;
}
