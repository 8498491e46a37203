/* csrun — a command tool's call: csrun itself run with the command line the
 * tool's entry makes (tools.c), in its own process group, its standard
 * output (one JSON document: --json) and the end of its standard error
 * read by the server; the tool's RENDER makes the text.  Cancelling it
 * sends SIGTERM to the group: `csrun sandbox exec` goes, and the sandbox's
 * keeper kills the command when its client is gone. */
#include "config.h"
#include "mcp-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "../util/log.h"
#include "tool-impl.h"

/* The largest run document read beyond a message's size (tool-run.c
 * says so when it is larger). */
#define RUN_DOCUMENT_MAX ((size_t)64 << 20)

/* The whole command line: SELF_EXE, the global options, then ARGS. */
static char **
full_argv (const struct csr_mcp_config *cfg, char *const *args)
{
  size_t ng = 0, na = 0;
  while (cfg->self_args && cfg->self_args[ng])
    ng++;
  while (args[na])
    na++;
  char **v = calloc (ng + na + 2, sizeof *v);
  if (v == NULL)
    return NULL;
  v[0] = (char *)"csrun";
  for (size_t i = 0; i < ng; i++)
    v[1 + i] = (char *)cfg->self_args[i];
  for (size_t i = 0; i < na; i++)
    v[1 + ng + i] = args[i];
  return v;
}

/* Fork and exec csrun: its stdin STDIN_TEXT (NULL: /dev/null), its stdout
 * and stderr the pipes OUT and ERR.  In the child, BEFORE_EXEC (may be NULL)
 * closes what it must not keep.  Returns the pid, -1. */
static pid_t
spawn (const struct csr_mcp_config *cfg, char **argv, int in_fd, int out_fd, int err_fd,
       void (*before_exec) (void *), void *data)
{
  sigset_t all, old;
  sigfillset (&all);
  sigprocmask (SIG_BLOCK, &all, &old);
  pid_t pid = fork ();
  if (pid == 0)
    {
      for (int sig = 1; sig < NSIG; sig++)
        signal (sig, SIG_DFL);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      setpgid (0, 0);
      if (before_exec)
        before_exec (data);
      if (dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || dup2 (err_fd, 2) < 0)
        _exit (125);
      sigprocmask (SIG_SETMASK, &old, NULL);
      execv (cfg->self_exe, argv);
      _exit (127);
    }
  sigprocmask (SIG_SETMASK, &old, NULL);
  return pid;
}

struct child_ctx
{
  struct csr_mcp_session *s;
  const struct mcp_job *j;
};

static void
close_server (void *data)
{
  struct child_ctx *c = data;
  mcp_child_close (c->s, c->j);
}

int
mcp_command_start (struct csr_mcp_session *s, struct mcp_job *j, csr_error **err)
{
  struct csr_mcp_argv av = { 0 };
  struct csr_mcp_input in;
  if (csr_mcp_command_argv (j->tool, j->args, &s->cfg->limits, &av, &in, err) < 0)
    {
      csr_mcp_argv_release (&av);
      csr_mcp_input_release (&in);
      return -1;
    }
  cleanup_free char **argv = full_argv (s->cfg, av.v);
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
  int in_fd = -1;
  int rc = -1;
  if (argv == NULL)
    {
      csr_error_set (err, ENOMEM, "the command line");
      goto out;
    }
  if (pipe2 (po, O_CLOEXEC) < 0 || pipe2 (pe, O_CLOEXEC) < 0)
    {
      csr_error_errno (err, "pipe");
      goto out;
    }
  if (in.data)
    {
      /* A memory file holds it whole, whatever its size: the command reads
       * it at its pace. */
      in_fd = memfd_create ("csrun-mcp-stdin", MFD_CLOEXEC);
      if (in_fd < 0 || csr_write_all (in_fd, in.data, in.len, err) < 0
          || lseek (in_fd, 0, SEEK_SET) < 0)
        {
          /* (an error of the write is kept: the first one set wins) */
          csr_error_errno (err, "the standard input of %s", j->tool->name);
          goto out;
        }
    }
  else if ((in_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
    {
      csr_error_errno (err, "open /dev/null");
      goto out;
    }
  struct child_ctx ctx = { s, j };
  pid_t pid = spawn (s->cfg, argv, in_fd, po[1], pe[1], close_server, &ctx);
  if (pid < 0)
    {
      csr_error_errno (err, "fork");
      goto out;
    }
  j->pid = pid;
  j->fd_main = po[0];
  j->fd_err = pe[0];
  po[0] = pe[0] = -1;
  /* A run document is cut to fit when it is done (mcp_run_result_fit):
   * it may come larger than a message (every attempt's output, twice). */
  j->main.max = j->tool->run_document ? s->cfg->max_frame + RUN_DOCUMENT_MAX : s->cfg->max_frame;
  j->err.max = 16384;
  rc = 0;
out:
  for (int i = 0; i < 2; i++)
    {
      if (po[i] >= 0)
        close (po[i]);
      if (pe[i] >= 0)
        close (pe[i]);
    }
  if (in_fd >= 0)
    close (in_fd);
  csr_mcp_argv_release (&av);
  csr_mcp_input_release (&in);
  return rc;
}

/* The document J's command printed (one object, whole), or NULL; its
 * output and stderr NUL-terminated.  -1: out of memory. */
static int
command_doc (struct mcp_job *j, yajl_val *doc)
{
  *doc = NULL;
  j->main.data = j->main.data ? j->main.data : strdup ("");
  j->err.data = j->err.data ? j->err.data : strdup ("");
  if (j->main.data == NULL || j->err.data == NULL)
    return -1;
  j->main.data[j->main.len] = '\0';
  j->err.data[j->err.len] = '\0';
  char yerr[128];
  /* csrun's own document: an exec's output in it may hold NULs. */
  if (!j->main.overflow && csr_json_prescan_opt (j->main.data, j->main.len, true, NULL) == 0)
    *doc = yajl_tree_parse (j->main.data, yerr, sizeof yerr);
  if (*doc && !YAJL_IS_OBJECT (*doc))
    csr_json_freep (doc);
  return 0;
}

void
mcp_command_adopt (struct csr_mcp_session *s, struct mcp_job *j)
{
  cleanup_yajl_val yajl_val doc = NULL;
  if (!j->tool->after || !WIFEXITED (j->status) || WEXITSTATUS (j->status) != 0
      || command_doc (j, &doc) < 0 || doc == NULL)
    return;
  csr_log (CSR_LOG_INFO,
           "mcp: call %s (%s) was cancelled after its command ended: its result "
           "is kept by the session",
           j->id, j->tool->name);
  j->tool->after (doc, s);
}

void
mcp_command_finish (struct csr_mcp_session *s, struct mcp_job *j)
{
  cleanup_yajl_val yajl_val doc = NULL;
  if (command_doc (j, &doc) < 0)
    {
      mcp_send_text_result (s, j->id, "error_type: CsrunError\nmessage: out of memory", true);
      return;
    }
  bool is_error = true;
  struct csr_mcp_output o = { .args = j->args,
                              .doc = doc,
                              .out = j->main.data,
                              .out_len = j->main.len,
                              .out_cut = j->main.overflow,
                              .status = j->status,
                              .err = j->err.data };
  cleanup_free char *text = j->tool->render (&o, &is_error);
  cleanup_yajl_val yajl_val made = o.structured;
  if (text == NULL)
    {
      is_error = true;
      text = strdup ("error_type: CsrunError\nmessage: out of memory");
    }
  if (doc && !is_error && j->tool->after)
    j->tool->after (doc, s);
  if (doc == NULL && is_error)
    csr_log (CSR_LOG_WARNING, "mcp: call %s (%s): %s", j->id, j->tool->name, text ? text : "?");
  size_t len = 0;
  size_t max = s->cfg->max_frame - 1024;
  cleanup_free char *r = NULL;
  if (text && doc && j->tool->run_document && !made)
    r = mcp_run_result_fit (steal_pointer (&text), doc, mcp_structured (s), is_error, max, &len);
  else if (text)
    r = mcp_tool_result (text, made ? made : doc, mcp_structured (s), is_error, &len);
  if (r == NULL || len > max)
    mcp_send_text_result (s, j->id,
                          "error_type: CsrunError\nmessage: the result is larger than the "
                          "largest message (csrun mcp --max-frame)",
                          true);
  else
    mcp_send_result (s, j, r);
}

void
mcp_command_cancel (struct mcp_job *j)
{
  if (j->pid > 0)
    kill (-j->pid, SIGTERM);
}

int
mcp_command_run_sync (const struct csr_mcp_config *cfg, const char *const *args, int timeout_ms)
{
  cleanup_free char **argv = full_argv (cfg, (char *const *)args);
  cleanup_close int null = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (argv == NULL || null < 0)
    return -1;
  /* Its output is of no use: a line of its own on our stderr says what
   * went wrong. */
  pid_t pid = spawn (cfg, argv, null, null, 2, NULL, NULL);
  if (pid < 0)
    return -1;
  int64_t end = csr_mono_ms () + timeout_ms;
  int st = 0;
  for (;;)
    {
      pid_t r = waitpid (pid, &st, WNOHANG);
      if (r == pid)
        return st;
      if (r < 0 && errno != EINTR)
        return -1;
      if (csr_mono_ms () >= end)
        {
          kill (-pid, SIGKILL);
          waitpid (pid, &st, 0);
          return -1;
        }
      poll (NULL, 0, 10);
    }
}
