/* csrun run: gate, run, scan, diagnose, heal, retry; one result. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "supervisor/capture.h"
#include "supervisor/notice.h"
#include "util/log.h"
#include "util/cleanup.h"
#include "util/stopsig.h"

/* "csrun run", or the command that shares its body (csr_run_main). */
static const char *prog = "csrun run";

/* One line on stderr about how the run ended (not for a first-try success). */
static void
print_outcome (const struct csr_run_result *r)
{
  size_t n = r->n_attempts;
  if (r->status == CSR_STATUS_OK || n == 0)
    return;
  const struct csr_attempt *last = &r->attempts[n - 1];
  if (r->status == CSR_STATUS_HEALED)
    {
      char rules[256] = "";
      for (size_t i = 0; i + 1 < n; i++)
        if (r->attempts[i].patch && r->attempts[i].patch->rules)
          snprintf (rules + strlen (rules), sizeof rules - strlen (rules), "%s%s",
                    rules[0] ? ", " : "", r->attempts[i].patch->rules);
      csr_say (prog, "healed after %zu attempts (%s); --json shows the patch", n, rules);
      return;
    }
  if (r->status == CSR_STATUS_ERROR)
    {
      csr_say (prog, "error: %s", r->error ? r->error : "unknown");
      return;
    }
  const struct csr_diagnosis *d = r->diagnosis;
  char where[32] = "";
  if (d && d->line > 0)
    snprintf (where, sizeof where, " (snippet.py line %d)", d->line);
  /* Only the message's first line: this is one line. */
  const char *msg = d && d->message ? d->message : "";
  int mlen = (int)strcspn (msg, "\n");
  const char *hint = d && d->hint ? d->hint : NULL;
  csr_say (prog, "%s after %zu attempt%s: %s%s%.*s%s%s%s%s%s", csr_status_name (r->status), n,
           n == 1 ? "" : "s", d ? d->error_type : "UnknownError", mlen ? ": " : "", mlen, msg,
           where, hint ? "; " : "", hint ? hint : "", last->patch_none ? "; " : "",
           last->patch_none ? last->patch_none : "");
}

/* Limits that were asked for but are weaker than a cgroup, or not enforced
 * at all (limits.warning): said whenever a limit was given on the command
 * line, else once per cache directory and host boot (the same rootless host
 * gives the same answer every time). */
static void
warn_limits (const struct run_opts *o, const struct csr_snippet_result *s)
{
  const char *w = s->loop.result.limits.warning;
  if (w == NULL)
    return;
  bool asked = o->req.limits.explicit_mask != 0;
  if (!asked)
    {
      csr_error *e = NULL;
      int first = csr_notice_first (s->cache_dir, "limits-warned", &e);
      if (first < 0)
        csr_debug ("the limits warning is given every time: %s", csr_error_text (e));
      csr_error_free (e);
      if (first == 0)
        return;
    }
  csr_say (prog, "warning: %s%s", w,
           asked ? ""
                 : " (said once per boot for this cache directory, and whenever --memory, "
                   "--pids or --cpus is given; the JSON always has limits.warning)");
}

/* Output cut by --max-output: one line naming the streams and what was
 * dropped from the attempt whose output was printed. */
static void
warn_output (const struct csr_run_result *r)
{
  if (r->n_attempts == 0)
    return;
  const struct csr_attempt *a = &r->attempts[r->n_attempts - 1];
  unsigned long long out = csr_bbuf_dropped (&a->out), err = csr_bbuf_dropped (&a->err);
  if (out == 0 && err == 0)
    return;
  char what[128] = "";
  if (out)
    snprintf (what, sizeof what, "stdout: %llu bytes dropped", out);
  if (err)
    snprintf (what + strlen (what), sizeof what - strlen (what), "%sstderr: %llu bytes dropped",
              out ? ", " : "", err);
  csr_say (prog,
           "warning: output cut by --max-output (%llu bytes per stream: the first and last half "
           "kept): %s",
           (unsigned long long)r->limits.max_output, what);
}

/* ---- issue 14: signals, standard input, live output ---- */

/* SIGINT, SIGTERM and SIGHUP write their number here; the capture loop polls
 * the read end, stops the jail and the loop heals nothing more.  A second
 * signal while the output is printed only adds a byte; a third ends csrun. */
static struct run_opts *signal_opts; /* its req.interrupt_fd gets the read end */

static void
on_interrupt (int sig)
{
  /* The third signal ends csrun at once, as without this handler: the way
   * out while csrun waits for a model or --patch-cmd (the jail's init dies
   * with csrun: its parent-death signal). */
  static volatile sig_atomic_t count;
  if (++count >= 3)
    {
      signal (sig, SIG_DFL);
      raise (sig);
    }
  csr_stopsig_note (sig);
}

static void
on_sigpipe (int sig)
{
  (void)sig; /* a write to a closed pipe fails with EPIPE instead */
}

/* Called once the snippet's code was read (so a Ctrl-C while typing it at a
 * terminal still ends csrun as before). */
static void
catch_signals (void)
{
  int fd = csr_stopsig_open (NULL);
  if (fd < 0)
    return; /* then signals end csrun as before */
  csr_stopsig_catch (on_interrupt);
  signal_opts->req.interrupt_fd = fd;
}

/* The snippet's stdin (see csrun-run(1), STANDARD INPUT): --stdin FILE,
 * --stdin - / -i (csrun's own, even a terminal), else csrun's own unless it
 * is a terminal or holds the code.  *FD -1: /dev/null.  Returns 0 or an exit
 * code after one line on stderr. */
static int
choose_stdin (struct run_opts *o, int *fd)
{
  *fd = -1;
  bool code_on_stdin = strcmp (o->file, "-") == 0;
  if (o->stdin_file && strcmp (o->stdin_file, "-") != 0)
    {
      int f = open (o->stdin_file, O_RDONLY | O_CLOEXEC);
      struct stat st;
      if (f >= 0 && fstat (f, &st) == 0 && S_ISDIR (st.st_mode))
        {
          close (f);
          f = -1;
          errno = EISDIR;
        }
      if (f < 0)
        {
          csr_say (prog, "cannot read --stdin '%s': %s", o->stdin_file, strerror (errno));
          return CSR_EXIT_USAGE;
        }
      *fd = f;
      return 0;
    }
  if (o->stdin_file && code_on_stdin)
    {
      csr_say (prog, "--stdin - (or -i) needs the code in a FILE: it is read from stdin");
      return CSR_EXIT_USAGE;
    }
  if (code_on_stdin || fcntl (STDIN_FILENO, F_GETFD) < 0)
    return 0;
  if (o->stdin_file == NULL && isatty (STDIN_FILENO))
    return 0; /* never read a terminal unless asked */
  struct stat in, null;
  if (fstat (STDIN_FILENO, &in) == 0 && S_ISCHR (in.st_mode) && stat ("/dev/null", &null) == 0
      && S_ISCHR (null.st_mode) && in.st_rdev == null.st_rdev)
    return 0; /* /dev/null: the snippet gets its own, no pipe to feed */
  *fd = STDIN_FILENO;
  return 0;
}

/* The last byte the live stream wrote of B (-1: none). */
static int
last_byte (const struct csr_bbuf *b)
{
  size_t n = 0;
  cleanup_free char *t = csr_bbuf_tail (b, &n);
  if (t && n > 0)
    return (unsigned char)t[n - 1];
  return b->head_len > 0 ? (unsigned char)b->head[b->head_len - 1] : -1;
}

/* Before a healed attempt runs, while the output streams live: one line
 * naming the patch. */
static void
say_next_attempt (void *data, const struct csr_attempt *failed, int next)
{
  (void)data;
  const struct csr_patch *p = failed->patch;
  char what[200];
  if (p == NULL)
    snprintf (what, sizeof what, "the same code runs again");
  else if (p->source && strcmp (p->source, "llm") == 0)
    snprintf (what, sizeof what, "healed by the model%s%s%s%s", p->provider ? " " : "",
              p->provider ? p->provider : "", p->model ? "/" : "", p->model ? p->model : "");
  else if (p->source && strcmp (p->source, "patch-cmd") == 0)
    snprintf (what, sizeof what, "healed by --patch-cmd");
  else
    snprintf (what, sizeof what, "healed by %s", p->rules ? p->rules : "a local rule");
  const struct csr_diagnosis *d = failed->diagnosis;
  csr_say_after (last_byte (&failed->out), last_byte (&failed->err));
  csr_say (prog, "---- attempt %d failed (%s); %s: attempt %d ----", failed->number,
           d && d->error_type ? d->error_type : "failed", what, next);
}

/* The run's output: the final attempt's, stdout and stderr in the order
 * written, unless it was streamed live. */
static void
print_output (const struct run_opts *o, const struct csr_run_result *r, bool live)
{
  if (r->n_attempts == 0)
    return;
  const struct csr_attempt *last = &r->attempts[r->n_attempts - 1];
  int out_last, err_last;
  if (live)
    {
      out_last = last_byte (&last->out);
      err_last = last_byte (&last->err);
    }
  else
    {
      /* On a terminal the snippet's bytes are shown neutralised (it could
       * otherwise set the title, write the clipboard, fake our lines...);
       * pipes and files get them exactly. */
      bool raw = o->raw_output;
      csr_capture_print_ordered (
          last, STDOUT_FILENO, STDERR_FILENO, !raw && csr_stream_is_terminal (STDOUT_FILENO),
          !raw && csr_stream_is_terminal (STDERR_FILENO), &out_last, &err_last);
    }
  csr_say_after (out_last, err_last);
}

int
cmd_run (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct run_opts o;
  run_opts_parse (argc, argv, &o);
  return csr_run_main ("csrun run", &o);
}

int
csr_run_main (const char *prog_name, struct run_opts *o)
{
  prog = prog_name;
  struct csr_snippet_result s;
  memset (&s, 0, sizeof s);
  csr_error *e = NULL;

  /* issue 14: stdin, live output, interruption. */
  int in_fd = -1;
  int rc = choose_stdin (o, &in_fd);
  if (rc != 0)
    return rc;
  o->req.stdin_fd = in_fd;
  bool live = o->live || (!o->no_live && !o->json && csr_stream_is_terminal (STDOUT_FILENO));
  if (live)
    {
      o->req.live_out = o->json ? STDERR_FILENO : STDOUT_FILENO;
      o->req.live_err = STDERR_FILENO;
      o->req.live_termsafe_out = !o->raw_output && csr_stream_is_terminal (o->req.live_out);
      o->req.live_termsafe_err = !o->raw_output && csr_stream_is_terminal (STDERR_FILENO);
      o->req.on_next_attempt = say_next_attempt;
    }
  struct sigaction pipe_sa = { .sa_handler = on_sigpipe };
  sigemptyset (&pipe_sa.sa_mask);
  sigaction (SIGPIPE, &pipe_sa, NULL);
  signal_opts = o;
  o->after_read = catch_signals;

  rc = csr_run_snippet_file (prog, o, &s, &e);
  if (rc != 0 && o->failed) /* issue 15: the exit code of a front end's own failures */
    rc = o->failed (o, e, rc);
  if (rc != 0)
    {
      rc = csr_report_failure (prog, o, &s.loop.result, e, rc);
      csr_error_free (e);
      csr_snippet_result_release (&s);
      if (in_fd > STDIN_FILENO)
        close (in_fd);
      return rc;
    }
  /* issue 15: before the result is printed (csrun sandbox run writes the fix back). */
  int after = o->after_run ? o->after_run (o, &s) : 0;
  const struct csr_run_result *r = &s.loop.result;
  bool json_failed = false;
  if (o->json)
    json_failed = csr_print_json (r) < 0;
  else
    print_output (o, r, live);
  if (r->stdin_store && r->stdin_store->truncated && !o->quiet)
    csr_say (prog,
             "warning: the standard input was cut at --stdin-max (%llu bytes): the snippet saw "
             "end-of-file there",
             (unsigned long long)r->stdin_store->max);
  if (r->status == CSR_STATUS_INTERRUPTED)
    {
      /* A terminal echoed ^C after the output: start a new line. */
      if (r->interrupt_signal == SIGINT && csr_stream_is_terminal (STDERR_FILENO))
        csr_say_after (-1, 'C');
      const char *abbrev = sigabbrev_np (r->interrupt_signal);
      const struct csr_launcher *L = o->req.launcher;
      csr_say (prog, "interrupted by SIG%s: %s%s", abbrev ? abbrev : "?",
               L && !L->one_shot ? "the attempt was stopped (the sandbox runs on)"
                                 : "the jail was stopped",
               r->n_attempts > 0 ? "" : " before the first attempt");
    }
  else if (!o->json)
    {
      if (!o->quiet)
        warn_output (r);
      if (!o->quiet)
        warn_limits (o, &s);
      if (!o->quiet || r->status == CSR_STATUS_ERROR)
        print_outcome (r);
      if (o->after_print)
        o->after_print (o, r);
    }
  rc = json_failed ? CSR_EXIT_INTERNAL : after ? after : csr_exit_code_for (r);
  csr_snippet_result_release (&s);
  if (in_fd > STDIN_FILENO)
    close (in_fd);
  return rc;
}
