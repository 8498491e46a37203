/* csrun batch (issue 17): many snippets, each in its own forked worker (its
 * own jail and cgroup, through the one snippet pipeline), at most -j at a
 * time; the parent alone writes the report, one line per finished item. */
#include "config.h"

#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch.h"
#include "cmd.h"
#include "common.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/parse.h"
#include "util/stopsig.h"

enum
{
  OPT_JOBS = 'j',
  OPT_MANIFEST = 2000,
  OPT_SKIP_BAD,
  OPT_REPORT,
  OPT_RESUME,
  OPT_FAIL_FAST,
  OPT_RETRY_FAILED,
  OPT_SHARD,
  OPT_MERGE,
  OPT_SUMMARY,
  OPT_HTML,
  OPT_TOTAL_MEMORY,
  OPT_PROGRESS,
  OPT_NO_PROGRESS,
  OPT_NO_WARM,
};

static struct argp_option batch_options[] = {
  { "jobs", OPT_JOBS, "N", 0,
    "Run at most N items' snippets at a time (default: the number of CPUs); with warm jails, N "
    "more make their jails meanwhile",
    0 },
  { "manifest", OPT_MANIFEST, "FILE", 0,
    "Also run the items of FILE: one JSON object per line (path, label, args, env, in, out, "
    "timeout, memory, stdin) or TSV (path, label, args...); see csrun-batch(1)",
    0 },
  { "skip-bad", OPT_SKIP_BAD, NULL, 0,
    "Skip manifest lines that do not parse (each is named on stderr) instead of refusing the "
    "batch",
    0 },
  { "report", OPT_REPORT, "FILE", 0,
    "Write one JSON result per item to FILE (JSONL: each line with one write, fsync at the "
    "end); with --merge, where the merged report goes",
    0 },
  { "resume", OPT_RESUME, NULL, 0,
    "Keep the results already in --report (same code and options, not interrupted) and run "
    "only the other items",
    0 },
  { "fail-fast", OPT_FAIL_FAST, NULL, 0,
    "Start no new item once one was not ok or healed (running items finish)", 0 },
  { "retry-failed", OPT_RETRY_FAILED, "N", 0,
    "Run an item that failed, timed out or erred up to N more times (0-10; the last result is "
    "kept)",
    0 },
  { "shard", OPT_SHARD, "I/N", 0,
    "Run only shard I of N (0 <= I < N): the items sorted by label, every N-th from the I-th", 0 },
  { "merge", OPT_MERGE, NULL, 0,
    "PATHs are reports: merge them (the last result per label wins) into --report FILE, or "
    "standard output",
    0 },
  { "summary", OPT_SUMMARY, "FILE", 0,
    "Write a Markdown report to FILE: counts, slowest items, failures, heals", 0 },
  { "html", OPT_HTML, "FILE", 0, "Write the same report as one self-contained HTML file", 0 },
  { "total-memory", OPT_TOTAL_MEMORY, "SIZE", 0,
    "Start an item only while the --memory of the running items, its own included, stays "
    "within SIZE",
    0 },
  { "progress", OPT_PROGRESS, NULL, 0,
    "A live progress line on stderr even when it is not a terminal", 0 },
  { "no-progress", OPT_NO_PROGRESS, NULL, 0, "One line per finished item even on a terminal", 0 },
  { "no-warm", OPT_NO_WARM, NULL, 0,
    "Start every item in a one-shot jail of its own, not in a warm jail forked by a zygote", 0 },
  { NULL, 0, NULL, 0, NULL, 0 },
};

static const char batch_doc[]
    = "Run many Python snippets, each in its own jail through the pipeline of csrun run.\v"
      "PATHs are snippet files and directories (every *.py below, sorted). Every option of "
      "csrun run but --json and --label applies to every item (a manifest line may override "
      "args, env, in, out, timeout, memory and stdin); with --out DIR each item's files go to "
      "DIR/LABEL.\n\n"
      "Exit status: 0 every item is ok or healed, 1 not, 2 usage or input error, 125 csrun "
      "itself failed (the report could not be written), 129/130/143 interrupted by "
      "SIGHUP/SIGINT/SIGTERM. See csrun-batch(1).";

static error_t
parse_batch (int key, char *arg, struct argp_state *state)
{
  struct batch_opts *o = state->input;
  csr_error *e = NULL;
  uint64_t u = 0;
  switch (key)
    {
    case ARGP_KEY_INIT:
      state->child_inputs[0] = &o->run;
      break;
    case OPT_JOBS:
      if (csr_parse_uint (arg, 1, 1024, &u, &e) < 0)
        run_opts_bad_value (state, "jobs", e);
      o->jobs = (unsigned)u;
      break;
    case OPT_MANIFEST:
      o->manifest = arg;
      break;
    case OPT_SKIP_BAD:
      o->skip_bad = true;
      break;
    case OPT_REPORT:
      o->report = arg;
      break;
    case OPT_RESUME:
      o->resume = true;
      break;
    case OPT_FAIL_FAST:
      o->fail_fast = true;
      break;
    case OPT_RETRY_FAILED:
      if (csr_parse_uint (arg, 0, 10, &u, &e) < 0)
        run_opts_bad_value (state, "retry-failed", e);
      o->retry_failed = (unsigned)u;
      break;
    case OPT_SHARD:
      {
        unsigned i = 0, n = 0;
        int used = 0;
        if (sscanf (arg, "%u/%u%n", &i, &n, &used) != 2 || arg[used] != '\0' || n == 0 || n > 100000
            || i >= n || arg[0] == '-')
          argp_failure (state, CSR_EXIT_USAGE, 0,
                        "invalid --shard: '%s' (I/N with 0 <= I < N, e.g. 0/4)", arg);
        o->shard_i = i;
        o->shard_n = n;
        break;
      }
    case OPT_MERGE:
      o->merge = true;
      break;
    case OPT_SUMMARY:
      o->summary_md = arg;
      break;
    case OPT_HTML:
      o->html = arg;
      break;
    case OPT_TOTAL_MEMORY:
      if (csr_parse_size (arg, 1ULL << 44, &o->total_memory, &e) < 0)
        run_opts_bad_value (state, "total-memory", e);
      break;
    case OPT_PROGRESS:
      o->progress = true;
      o->no_progress = false;
      break;
    case OPT_NO_PROGRESS:
      o->no_progress = true;
      o->progress = false;
      break;
    case OPT_NO_WARM:
      o->no_warm = true;
      break;
    case ARGP_KEY_ARG:
      o->paths = &state->argv[state->next - 1];
      o->n_paths = (size_t)(state->argc - state->next + 1);
      state->next = state->argc;
      break;
    case ARGP_KEY_END:
      if (o->n_paths == 0 && o->manifest == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      o->merge ? "--merge needs the reports to merge"
                               : "missing PATH (snippet files, directories) or --manifest");
      if (o->run.stdin_file && strcmp (o->run.stdin_file, "-") == 0)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--stdin - and --interactive can't be shared by a batch (--stdin FILE "
                      "gives every item FILE)");
      if (o->run.live)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--live: a batch shows progress, not the items' output (it is in the "
                      "report)");
      if (o->resume && o->report == NULL)
        argp_failure (state, CSR_EXIT_USAGE, 0, "--resume needs --report FILE");
      if (o->merge && (o->manifest || o->resume || o->shard_n))
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--merge takes reports only (no --manifest, --resume or --shard)");
      if (o->merge && o->report == NULL && (o->summary_md || o->html))
        argp_failure (state, CSR_EXIT_USAGE, 0, "--merge with --summary/--html needs --report");
      if (o->run.req.host_net && !o->run.allow_host_net)
        argp_failure (state, CSR_EXIT_USAGE, 0,
                      "--net host gives the snippets the host's network (no isolation): add "
                      "--allow-host-net to mean it");
      break;
    default:
      return ARGP_ERR_UNKNOWN;
    }
  return 0;
}

static struct argp_child batch_children[]
    = { { &run_opts_batch_argp, 0, "Run options (as csrun run; every item):", 0 },
        { NULL, 0, NULL, 0 } };
static struct argp batch_argp
    = { batch_options, parse_batch, "PATH...", batch_doc, batch_children, NULL, NULL };

/* ---------------------------------------------------------------- the scheduler */

struct slot
{
  pid_t pid; /* 0: free */
  int fd;
  /* Warm jails ahead: the write end of the worker's go-ahead (pool.h
   * csr_pool_set_run_gate) until it is given (granted) or the batch stops
   * (closed: the worker ends, its item not run); SEQ orders the waiting. */
  int go;
  bool granted;
  bool released; /* its result came whole: its go-ahead goes on (grant) */
  uint64_t seq;
  char *buf;
  size_t len, cap;
  size_t item;
  unsigned try;
  bool killed; /* by the second signal */
};

struct batch
{
  struct batch_opts *o;
  struct batch_items *items;
  struct batch_report rep;
  struct batch_counts c;
  struct slot *slots;
  /* Workers at a time: --jobs; with warm jails twice that, and only --jobs
   * of them granted: the others make their jails meanwhile (ahead). */
  unsigned n_slots;
  bool ahead;
  unsigned n_granted;
  uint64_t seq;
  struct pollfd *pfd; /* n_slots + 1, for run_batch's poll */
  unsigned *map;
  unsigned n_running;
  uint64_t mem_running;
  int intr[2];      /* the workers' interrupt pipe: closed = stop */
  int stop_sig;     /* the signal that stopped the batch */
  bool stop_launch; /* --fail-fast, a signal, a report failure */
  bool report_failed;
  bool live; /* the progress line */
  bool line_open;
  uint64_t start_ms;
};

static void
progress_line (struct batch *b)
{
  const struct batch_counts *c = &b->c;
  double el = (double)(csr_mono_ms () - b->start_ms) / 1000.0;
  size_t ran = c->finished - c->resumed;
  double rate = el > 0 ? (double)ran / el : 0;
  char eta[32] = "-";
  if (rate > 0)
    snprintf (eta, sizeof eta, "%.0fs", (double)(c->total - c->finished) / rate);
  fprintf (stderr,
           "\r\x1b[Kcsrun batch: %zu/%zu ok %zu healed %zu failed %zu blocked %zu timeout %zu "
           "error %zu | %.1f/s ETA %s",
           c->finished, c->total, c->by_status[CSR_STATUS_OK], c->by_status[CSR_STATUS_HEALED],
           c->by_status[CSR_STATUS_FAILED], c->by_status[CSR_STATUS_BLOCKED],
           c->by_status[CSR_STATUS_TIMEOUT], c->by_status[CSR_STATUS_ERROR], rate, eta);
  fflush (stderr);
  b->line_open = true;
}

static void
end_line (struct batch *b)
{
  if (b->line_open)
    fputc ('\n', stderr);
  b->line_open = false;
}

/* Give the go-ahead to the workers that wait longest, while fewer than
 * --jobs have it; or, once the batch stops launching, end those that wait
 * (their items are not run). */
static void
grant (struct batch *b)
{
  for (;;)
    {
      struct slot *w = NULL;
      for (unsigned i = 0; i < b->n_slots; i++)
        if (b->slots[i].pid > 0 && b->slots[i].go >= 0 && (w == NULL || b->slots[i].seq < w->seq))
          w = &b->slots[i];
      if (w == NULL)
        return;
      if (!b->stop_launch)
        {
          if (b->n_granted >= b->o->jobs)
            return;
          if (write (w->go, "g", 1) == 1)
            {
              w->granted = true;
              b->n_granted++;
            }
        }
      close (w->go); /* without the byte: the worker ends */
      w->go = -1;
    }
}

static int
launch (struct batch *b, struct slot *s, size_t item, unsigned try)
{
  int p[2], g[2] = { -1, -1 };
  if (pipe2 (p, O_CLOEXEC) < 0)
    return -1;
  if (b->ahead && pipe2 (g, O_CLOEXEC) < 0)
    {
      close (p[0]);
      close (p[1]);
      return -1;
    }
  fflush (NULL);
  /* Until the worker has its own handlers, a stop signal waits. */
  sigset_t set, old;
  csr_stopsig_set (&set);
  sigprocmask (SIG_BLOCK, &set, &old);
  pid_t pid = fork ();
  if (pid != 0)
    sigprocmask (SIG_SETMASK, &old, NULL);
  if (pid < 0)
    {
      close (p[0]);
      close (p[1]);
      if (g[0] >= 0)
        {
          close (g[0]);
          close (g[1]);
        }
      return -1;
    }
  if (pid == 0)
    {
      /* The worker holds only its own pipes and the interrupt's read end. */
      close (p[0]);
      if (g[1] >= 0)
        close (g[1]);
      csr_pool_set_run_gate (g[0]);
      csr_stopsig_close ();
      if (b->intr[1] >= 0)
        close (b->intr[1]);
      close (b->rep.fd);
      for (unsigned i = 0; i < b->n_slots; i++)
        if (b->slots[i].pid > 0)
          {
            close (b->slots[i].fd);
            if (b->slots[i].go >= 0)
              close (b->slots[i].go);
          }
      if (b->o->pool)
        csr_pool_use_slot (b->o->pool, (unsigned)(s - b->slots));
      batch_worker (b->o, &b->items->v[item], try, p[1], b->intr[0]);
    }
  close (p[1]);
  if (g[0] >= 0)
    close (g[0]);
  *s = (struct slot){ .pid = pid,
                      .fd = p[0],
                      .item = item,
                      .try = try,
                      .go = g[1],
                      .granted = !b->ahead,
                      .seq = b->seq++ };
  if (s->granted)
    b->n_granted++; /* no warm jails: every worker runs at once */
  b->n_running++;
  b->mem_running += b->items->v[item].memory;
  grant (b);
  return 0;
}

/* Stop: no new items, the running ones stop their jails (they report
 * "interrupted").  A second signal kills the workers. */
static void
stop (struct batch *b, int sig)
{
  b->stop_launch = true;
  if (b->stop_sig == 0)
    {
      b->stop_sig = sig;
      for (unsigned i = 0; i < b->n_slots; i++)
        if (b->slots[i].pid > 0)
          kill (b->slots[i].pid, sig); /* a worker of ours: it stops its jail */
      unsigned char c = (unsigned char)sig;
      for (unsigned i = 0; i < b->n_running; i++)
        if (write (b->intr[1], &c, 1) < 0)
          break;
      close (b->intr[1]);
      b->intr[1] = -1;
      grant (b); /* the workers still waiting end: their items are not run */
      return;
    }
  for (unsigned i = 0; i < b->n_slots; i++)
    if (b->slots[i].pid > 0 && !b->slots[i].killed)
      {
        kill (b->slots[i].pid, SIGKILL);
        b->slots[i].killed = true;
      }
}

static void
record (struct batch *b, struct slot *s, int wstatus)
{
  struct batch_item *it = &b->items->v[s->item];
  if (!s->granted && s->len == 0 && WIFEXITED (wstatus)
      && WEXITSTATUS (wstatus) == BATCH_WORKER_CANCELLED)
    {
      /* The batch stopped before this item ran: not run, nothing recorded. */
      free (s->buf);
      s->buf = NULL;
      s->pid = 0;
      return;
    }
  struct batch_line_info info;
  char *line = s->buf;
  size_t len = s->len;
  cleanup_free char *own = NULL;
  if (len == 0 || line[len - 1] != '\n' || batch_line_parse (line, len - 1, &info) < 0)
    {
      char why[160];
      if (WIFSIGNALED (wstatus))
        snprintf (why, sizeof why, "the batch worker was killed by signal %d (%s)",
                  WTERMSIG (wstatus), strsignal (WTERMSIG (wstatus)));
      else
        snprintf (why, sizeof why, "the batch worker ended without a result (exit status %d)",
                  WEXITSTATUS (wstatus));
      int st = s->killed || (b->stop_sig && WIFSIGNALED (wstatus)) ? CSR_STATUS_INTERRUPTED
                                                                   : CSR_STATUS_ERROR;
      own = batch_error_line (it, s->try, st, why, &len);
      line = own;
      memset (&info, 0, sizeof info);
      info.status = st;
    }
  int st = info.status;
  uint64_t ms = info.duration_ms;
  batch_line_info_release (&info);
  bool bad = st != CSR_STATUS_OK && st != CSR_STATUS_HEALED;
  bool retry_able = st == CSR_STATUS_FAILED || st == CSR_STATUS_TIMEOUT || st == CSR_STATUS_ERROR;
  if (bad && retry_able && s->try <= b->o->retry_failed && !b->stop_launch && line)
    {
      size_t item = s->item;
      unsigned try = s->try + 1;
      b->c.retried++;
      free (s->buf);
      s->buf = NULL;
      s->pid = 0;
      if (launch (b, s, item, try) == 0)
        return;
      /* could not fork: keep this result */
    }
  csr_error *e = NULL;
  if (line == NULL)
    {
      end_line (b);
      fprintf (stderr, "csrun batch: %s: out of memory for its result\n", it->label);
      b->report_failed = true;
      stop (b, SIGTERM);
    }
  else if (!b->report_failed && batch_report_append (&b->rep, line, len, &e) < 0)
    {
      end_line (b);
      fprintf (stderr, "csrun batch: %s (stopping the batch)\n", csr_error_text (e));
      csr_error_free (e);
      b->report_failed = true;
      if (b->stop_sig == 0)
        stop (b, SIGTERM);
    }
  if (st >= 0 && st < BATCH_N_STATUS)
    b->c.by_status[st]++;
  b->c.finished++;
  if (bad && b->o->fail_fast)
    b->stop_launch = true;
  if (b->live)
    {
      /* Items that need a look stay on the screen, above the progress line. */
      if (bad && !b->o->run.quiet)
        fprintf (stderr, "\r\x1b[Kcsrun batch: %s %s (%llu ms)\n",
                 st >= 0 ? csr_status_name ((enum csr_status)st) : "?", it->label,
                 (unsigned long long)ms);
      progress_line (b);
    }
  else if (!b->o->run.quiet || bad)
    fprintf (stderr, "csrun batch: [%zu/%zu] %s %s (%llu ms%s)\n", b->c.finished, b->c.total,
             st >= 0 ? csr_status_name ((enum csr_status)st) : "?", it->label,
             (unsigned long long)ms, s->try > 1 ? ", retried" : "");
  free (s->buf);
  s->buf = NULL;
  s->pid = 0;
}

/* Read what S's worker wrote; at end-of-file reap it and record the item. */
static void
drain (struct batch *b, struct slot *s)
{
  for (;;)
    {
      if (s->cap - s->len < 65536)
        {
          size_t cap = s->cap ? s->cap * 2 : 65536;
          char *nb = realloc (s->buf, cap);
          if (nb == NULL)
            break; /* the result is lost: recorded as an error below */
          s->buf = nb;
          s->cap = cap;
        }
      ssize_t r = read (s->fd, s->buf + s->len, s->cap - s->len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return;
      if (r > 0)
        {
          s->len += (size_t)r;
          /* The worker writes its line last, then only exits: the next
           * item may run meanwhile (with --fail-fast, only once the line
           * is recorded: it may stop the batch). */
          if (s->granted && !s->released && !b->o->fail_fast && s->buf[s->len - 1] == '\n')
            {
              s->released = true;
              b->n_granted--;
              grant (b);
            }
          continue;
        }
      break;
    }
  close (s->fd);
  s->fd = -1;
  int ws = 0;
  while (waitpid (s->pid, &ws, 0) < 0 && errno == EINTR)
    ;
  b->n_running--;
  b->mem_running -= b->items->v[s->item].memory;
  if (s->granted && !s->released)
    b->n_granted--;
  if (s->go >= 0)
    close (s->go);
  s->go = -1;
  s->cap = 0;
  record (b, s, ws);
  grant (b);
}

static int
run_batch (struct batch *b)
{
  struct batch_opts *o = b->o;
  size_t next = 0;
  for (;;)
    {
      while (!b->stop_launch && b->n_running < b->n_slots && next < b->items->n)
        {
          struct batch_item *it = &b->items->v[next];
          if (it->done)
            {
              next++;
              continue;
            }
          if (o->total_memory && b->n_running > 0 && b->mem_running + it->memory > o->total_memory)
            break; /* wait for memory */
          struct slot *s = NULL;
          for (unsigned i = 0; i < b->n_slots && s == NULL; i++)
            if (b->slots[i].pid == 0)
              s = &b->slots[i];
          if (launch (b, s, next, 1) < 0)
            {
              end_line (b);
              fprintf (stderr, "csrun batch: cannot start a worker: %s\n", strerror (errno));
              if (b->n_running == 0)
                return -1;
              break;
            }
          next++;
        }
      if (b->n_running == 0)
        break;
      struct pollfd *pfd = b->pfd;
      unsigned *map = b->map;
      nfds_t n = 0;
      pfd[n++] = (struct pollfd){ .fd = csr_stopsig_fd (), .events = POLLIN };
      for (unsigned i = 0; i < b->n_slots; i++)
        if (b->slots[i].pid > 0)
          {
            map[n] = i;
            pfd[n++] = (struct pollfd){ .fd = b->slots[i].fd, .events = POLLIN };
          }
      int r = poll (pfd, n, b->live ? 500 : -1);
      if (r < 0 && errno != EINTR)
        return -1;
      if (r > 0 && (pfd[0].revents & POLLIN))
        {
          int sig = csr_stopsig_take ();
          if (sig)
            stop (b, sig);
        }
      for (nfds_t k = 1; r > 0 && k < n; k++)
        if (pfd[k].revents)
          drain (b, &b->slots[map[k]]);
      if (b->live)
        progress_line (b);
    }
  return 0;
}

/* issue 17: the warm jails of the batch (pool.h): one zygote, or
 * $CSRUN_ZYGOTES; none with --no-warm or when every item would need a
 * one-shot jail anyway; none, with a warning, when this host or rootfs
 * can't have them. */
static struct csr_pool *
batch_pool_start (const struct batch_opts *o, const struct csr_snippet_result *pre)
{
  const struct csr_snippet_request *q = &o->run.req;
  if (o->no_warm || q->n_inputs || q->out_dir || q->n_mounts || q->user_uid || q->host_net)
    return NULL;
  unsigned n = 1;
  const char *env = getenv ("CSRUN_ZYGOTES");
  if (env && *env)
    {
      char *end;
      unsigned long v = strtoul (env, &end, 10);
      n = *end == '\0' && v >= 1 && v <= CSR_POOL_MAX_ZYGOTES ? (unsigned)v : 1;
    }
  if (n > o->jobs)
    n = o->jobs;
  struct csr_pool *pool = NULL;
  csr_error *e = NULL;
  if (csr_pool_start (pre, n, &pool, &e) < 0)
    {
      fprintf (stderr, "csrun batch: warning: %s: every item runs in a one-shot jail\n",
               csr_error_text (e));
      csr_error_free (e);
      return NULL;
    }
  return pool;
}

static int
cmd_merge (struct batch_opts *o)
{
  struct batch_counts c = { 0 };
  csr_error *e = NULL;
  if (batch_merge (o->paths, o->n_paths, o->report, &c, &e) < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      return CSR_EXIT_USAGE;
    }
  batch_print_summary (&c, 0);
  if (batch_write_summaries (o, o->report, NULL, &c, 0, &e) < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      return CSR_EXIT_INTERNAL;
    }
  return c.by_status[CSR_STATUS_OK] + c.by_status[CSR_STATUS_HEALED] == c.total ? CSR_EXIT_OK
                                                                                : CSR_EXIT_FAILED;
}

int
cmd_batch (struct csr_global *g, int argc, char **argv)
{
  (void)g;
  struct batch_opts o;
  memset (&o, 0, sizeof o);
  run_opts_defaults (&o.run);
  argp_parse (&batch_argp, argc, argv, ARGP_IN_ORDER, NULL, &o);
  if (o.merge)
    return cmd_merge (&o);
  if (o.jobs == 0)
    {
      long n = sysconf (_SC_NPROCESSORS_ONLN);
      o.jobs = n > 0 ? (unsigned)(n > 1024 ? 1024 : n) : 1;
    }
  struct batch_items items = { 0 };
  csr_error *e = NULL;
  if (batch_items_collect (&o, &items, &e) < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      batch_items_release (&items);
      return CSR_EXIT_USAGE;
    }
  /* What every item shares, loaded once here rather than in every worker:
   * the policies, the rootfs (unpacked if needed), seccomp, the gate. */
  struct csr_snippet_result pre;
  memset (&pre, 0, sizeof pre);
  int prc = csr_snippet_preload (&o.run.req, &pre, &e);
  if (prc < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      csr_snippet_result_release (&pre);
      batch_items_release (&items);
      return prc == CSR_SNIPPET_BAD_INPUT ? CSR_EXIT_USAGE : CSR_EXIT_INTERNAL;
    }
  o.preloaded = &pre;
  o.pool = batch_pool_start (&o, &pre);
  struct batch b = { .o = &o, .items = &items, .intr = { -1, -1 } };
  b.c.total = items.n;
  b.live = o.progress || (!o.no_progress && isatty (STDERR_FILENO));
  int rc = CSR_EXIT_OK;
  if (batch_report_open (&o, &b.rep, &e) < 0
      || (o.resume && batch_resume (&b.rep, &items, &b.c, &e) < 0))
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      batch_report_close (&b.rep, NULL);
      batch_items_release (&items);
      return CSR_EXIT_INTERNAL;
    }
  /* Warm jails: as many workers again make theirs ahead (grant). */
  b.ahead = o.pool != NULL;
  b.n_slots = b.ahead ? 2 * o.jobs : o.jobs;
  b.slots = calloc (b.n_slots, sizeof *b.slots);
  b.pfd = calloc (b.n_slots + 1, sizeof *b.pfd);
  b.map = calloc (b.n_slots + 1, sizeof *b.map);
  if (b.slots == NULL || b.pfd == NULL || b.map == NULL || pipe2 (b.intr, O_CLOEXEC) < 0
      || csr_stopsig_open (NULL) < 0)
    {
      fprintf (stderr, "csrun batch: cannot set up: %s\n", strerror (errno));
      return CSR_EXIT_INTERNAL;
    }
  for (unsigned i = 0; i < b.n_slots; i++)
    b.slots[i].fd = b.slots[i].go = -1;
  csr_stopsig_catch (NULL);
  signal (SIGPIPE, SIG_IGN);
  b.start_ms = csr_mono_ms ();
  if (b.live)
    progress_line (&b);
  if (run_batch (&b) < 0)
    {
      end_line (&b);
      fprintf (stderr, "csrun batch: the scheduler failed: %s\n", strerror (errno));
      rc = CSR_EXIT_INTERNAL;
    }
  end_line (&b);
  double seconds = (double)(csr_mono_ms () - b.start_ms) / 1000.0;
  if (b.stop_sig && !b.report_failed)
    fprintf (stderr, "csrun batch: interrupted by SIG%s: %zu item%s not run (--resume runs them)\n",
             sigabbrev_np (b.stop_sig) ? sigabbrev_np (b.stop_sig) : "?",
             b.c.total - b.c.finished + b.c.by_status[CSR_STATUS_INTERRUPTED],
             b.c.total - b.c.finished + b.c.by_status[CSR_STATUS_INTERRUPTED] == 1 ? "" : "s");
  batch_print_summary (&b.c, seconds);
  if (batch_write_summaries (&o, b.rep.path, &items, &b.c, seconds, &e) < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      rc = CSR_EXIT_INTERNAL;
    }
  if (batch_report_close (&b.rep, &e) < 0)
    {
      fprintf (stderr, "csrun batch: %s\n", csr_error_text (e));
      csr_error_free (e);
      rc = CSR_EXIT_INTERNAL;
    }
  if (b.report_failed)
    rc = CSR_EXIT_INTERNAL;
  if (rc == CSR_EXIT_OK)
    {
      if (b.stop_sig)
        rc = 128 + b.stop_sig;
      else if (b.c.by_status[CSR_STATUS_OK] + b.c.by_status[CSR_STATUS_HEALED] != b.c.total)
        rc = CSR_EXIT_FAILED;
    }
  free (b.slots);
  free (b.pfd);
  free (b.map);
  batch_items_release (&items);
  csr_pool_stop (o.pool);
  csr_snippet_result_release (&pre);
  return rc;
}
