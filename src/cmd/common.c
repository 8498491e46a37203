/* csrun — what the front ends that run snippets share: reading the snippet
 * into the pipeline's request, the exit codes, printing results. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/termsafe.h"

/* Read the snippet; any problem with it is a usage error (exit 2). */
static int
read_snippet (const struct run_opts *o, const char *name, char **code, size_t *len, csr_error **err)
{
  int rc = strcmp (o->file, "-") == 0 ? csr_read_fd (0, o->req.max_code, code, len, err)
                                      : csr_read_file (o->file, o->req.max_code, code, len, err);
  if (rc < 0)
    return csr_error_wrap (err, "cannot read the snippet '%s'", name);
  return 0;
}

void
csr_say_rootfs_damage (const char *prog, const struct csr_snippet_result *res)
{
  size_t n = res->damaged_files;
  if (n == 0)
    return;
  const char *first = res->damaged_first ? res->damaged_first : "?";
  if (res->repaired)
    fprintf (stderr, "%s: the cached rootfs %s was damaged (%zu %s: first %s); unpacked it again\n",
             prog, res->rootfs_dir, n, n == 1 ? "file" : "files", first);
  else if (res->repair_error)
    fprintf (stderr, "%s: the cached rootfs %s is damaged (%zu %s: first %s): %s\n", prog,
             res->rootfs_dir, n, n == 1 ? "file" : "files", first, res->repair_error);
}

int
csr_run_snippet_file (const char *prog, struct run_opts *o, struct csr_snippet_result *res,
                      csr_error **err)
{
  if (o->req.host_net && !o->allow_host_net)
    {
      csr_error_set (err, 0,
                     "--net host gives the snippet the host's network (no isolation): add "
                     "--allow-host-net to mean it");
      return CSR_EXIT_USAGE;
    }
  const char *name = strcmp (o->file, "-") == 0 ? "standard input" : o->file;
  cleanup_free char *code = NULL;
  size_t len = 0;
  if (o->read_code) /* issue 15: a file of the sandbox */
    {
      int rc = o->read_code (o, name, &code, &len, err);
      if (rc != 0)
        return rc;
    }
  else if (read_snippet (o, name, &code, &len, err) < 0)
    return CSR_EXIT_USAGE;
  if (o->after_read) /* issue 14: csrun run catches signals from here on */
    o->after_read ();
  o->req.name = name;
  o->req.code = code;
  o->req.code_len = len;
  int rc = csr_snippet_run (&o->req, res, err);
  /* What was run, in the result document. */
  res->loop.result.file = o->file;
  res->loop.result.args = o->req.args;
  res->loop.result.n_args = o->req.n_args > 0 ? (size_t)o->req.n_args : 0;
  res->loop.result.label = o->label;
  res->loop.result.sandbox = o->sandbox;
  o->req.code = NULL;
  o->req.code_len = 0;
  csr_say_rootfs_damage (prog, res);
  if (rc == CSR_SNIPPET_BAD_INPUT)
    return CSR_EXIT_USAGE;
  return rc < 0 ? CSR_EXIT_INTERNAL : 0;
}

int
csr_exit_code_for (const struct csr_run_result *r)
{
  switch (r->status)
    {
    case CSR_STATUS_OK:
    case CSR_STATUS_HEALED:
      return CSR_EXIT_OK;
    case CSR_STATUS_BLOCKED:
      return CSR_EXIT_BLOCKED;
    case CSR_STATUS_TIMEOUT:
      return CSR_EXIT_TIMEOUT;
    case CSR_STATUS_ERROR:
      return CSR_EXIT_INTERNAL;
    case CSR_STATUS_INTERRUPTED: /* issue 14: as a shell reports a signal */
      return 128 + (r->interrupt_signal > 0 ? r->interrupt_signal : 2);
    case CSR_STATUS_FAILED:
    default:
      return CSR_EXIT_FAILED;
    }
}

int
csr_print_json (const struct csr_run_result *r)
{
  cleanup_free char *json = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  if (csr_result_to_json (r, &json, &len, &e) < 0)
    {
      fprintf (stderr, "csrun run: cannot serialise the result: %s\n", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  /* yajl escapes the C0 controls; on a terminal escape the C1 and bidi
   * controls too (the same document: only how it is spelled changes). */
  cleanup_free char *safe = NULL;
  if (csr_stream_is_terminal (STDOUT_FILENO))
    safe = csr_termsafe_json (json, len, &len);
  /* The whole document and its newline in one write(2): results of runs
   * appending to one file (>> one.jsonl, O_APPEND) never interleave.  Only
   * EINTR and a short write (a pipe, a full disk) are retried. */
  if (fflush (stdout) != 0 || csr_write_all (STDOUT_FILENO, safe ? safe : json, len, &e) < 0)
    {
      fprintf (stderr, "csrun run: cannot write the result: %s\n",
               e ? csr_error_text (e) : strerror (errno));
      csr_error_free (e);
      return -1;
    }
  return 0;
}

/* Does csrun's next line on stderr start in the middle of a line? */
static bool say_midline;

void
csr_say_after (int out_last, int err_last)
{
  say_midline = false;
  if (err_last >= 0)
    {
      say_midline = err_last != '\n';
      return;
    }
  /* Nothing went to stderr: what stdout printed matters when both are the
   * same file or terminal (2>&1). */
  struct stat so, se;
  if (out_last >= 0 && out_last != '\n' && fstat (STDOUT_FILENO, &so) == 0
      && fstat (STDERR_FILENO, &se) == 0
      && (S_ISCHR (so.st_mode) && S_ISCHR (se.st_mode)
              ? so.st_rdev == se.st_rdev
              : so.st_dev == se.st_dev && so.st_ino == se.st_ino))
    say_midline = true;
}

bool
csr_stream_is_terminal (int fd)
{
  return isatty (fd) == 1;
}

void
csr_say (const char *prog, const char *fmt, ...)
{
  cleanup_free char *text = NULL;
  va_list ap;
  va_start (ap, fmt);
  int n = vasprintf (&text, fmt, ap);
  va_end (ap);
  if (n < 0)
    text = NULL;
  const char *nl = say_midline ? "\n" : "";
  say_midline = false;
  if (!csr_stream_is_terminal (STDERR_FILENO))
    {
      fprintf (stderr, "%s%s: %s\n", nl, prog, text ? text : fmt);
      fflush (stderr);
      return;
    }
  /* Reverse video around PROG: csr_termsafe never lets the snippet's output
   * (nor TEXT, which may quote it) carry an ESC, so only csrun can print this. */
  cleanup_free char *safe = csr_termsafe_str (text ? text : fmt);
  const char *term = getenv ("TERM");
  bool dumb = term && strcmp (term, "dumb") == 0;
  fprintf (stderr, "%s%s%s%s: %s\n", nl, dumb ? "" : CSR_SAY_MARK_ON, prog,
           dumb ? "" : CSR_SAY_MARK_OFF, safe ? safe : "(out of memory)");
  fflush (stderr);
}

/* A failure of csrun itself (or bad input): one line on stderr, and with
 * --json a result document with status "error" so an agent never loses the
 * outcome (bad input gives no document: nothing ran). */
int
csr_report_failure (const char *prog, const struct run_opts *o, struct csr_run_result *r,
                    csr_error *e, int code)
{
  const char *msg = csr_error_text (e);
  csr_say (prog, "%s", msg);
  if (o->json && code == CSR_EXIT_INTERNAL)
    {
      r->status = CSR_STATUS_ERROR;
      r->error = msg;
      csr_print_json (r);
    }
  return code;
}
