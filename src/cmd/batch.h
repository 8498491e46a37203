/* csrun batch (issue 17): many snippets, each through the snippet pipeline
 * in its own worker process (its own jail and cgroup), results appended to
 * one JSONL report by the parent only.  batch.c: options and the scheduler;
 * batch-items.c: the item list (files, directories, manifests, shards);
 * batch-worker.c: one item in a forked worker; batch-report.c: the report
 * (atomic lines, resume, merge); batch-summary.c: the tables, Markdown and
 * HTML. */
#ifndef CSRUN_BATCH_H
#define CSRUN_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run-opts.h"
#include "supervisor/pool.h"
#include "supervisor/result.h"
#include "util/digest.h"
#include "util/error.h"

#define BATCH_N_STATUS (CSR_STATUS_INTERRUPTED + 1)
/* A worker's exit status when the batch stopped before its item ran (its
 * go-ahead never came, pool.h csr_pool_set_run_gate): no result, the item
 * is not run. */
#define BATCH_WORKER_CANCELLED 3

struct batch_item
{
  char *path;      /* the code file */
  char *label;     /* unique in the batch */
  char *line;      /* the manifest line (a JSON object), or NULL */
  size_t line_no;  /* in the manifest (0: not from one) */
  uint64_t memory; /* its --memory: what --total-memory counts */
  size_t index;    /* position in the whole (unsharded) list, 0-based */
  char options_sha256[CSR_SHA256_HEX_LEN + 1];
  bool done; /* --resume: already in the report */
};

struct batch_items
{
  struct batch_item *v;
  size_t n, cap;
};

struct batch_opts
{
  struct run_opts run; /* the run options every item starts from */
  unsigned jobs;
  const char *manifest;
  bool skip_bad;
  const char *report;
  bool resume;
  bool fail_fast;
  unsigned retry_failed;
  unsigned shard_i, shard_n; /* shard_n 0: no --shard */
  bool merge;
  const char *summary_md;
  const char *html;
  uint64_t total_memory; /* 0: no cap */
  bool progress, no_progress;
  char **paths;
  size_t n_paths;
  /* Loaded once by the parent before the workers fork (csr_snippet_preload). */
  const struct csr_snippet_result *preloaded;
  /* issue 17: warm jails (supervisor/pool.h), started by the parent; NULL
   * with --no-warm or when they can't be had here. */
  bool no_warm;
  struct csr_pool *pool;
};

struct batch_counts
{
  size_t by_status[BATCH_N_STATUS];
  size_t total;    /* items in this batch (this shard) */
  size_t finished; /* have a result (run now or resumed) */
  size_t resumed;
  size_t retried;
};

/* ---- batch-items.c */
/* Collect the items of O (PATHs and --manifest), check labels, keep only
 * shard I/N.  Usage problems: -1 with *ERR (exit 2). */
int batch_items_collect (const struct batch_opts *o, struct batch_items *items, csr_error **err);
void batch_items_release (struct batch_items *items);
/* The item's label for a file path/the directory output name. */
char *batch_out_name (const char *label);
/* The fingerprint of the run options (everything that changes a result)
 * and of the item's manifest line. */
void batch_item_options_digest (const struct run_opts *o, struct batch_item *it);
/* Find LABEL in ITEMS (sorted by label after collect: see by_label). */
struct batch_item *batch_items_find (struct batch_items *items, const char *label);

/* ---- batch-worker.c */
/* In the forked worker: run ITEM (try TRY, 1-based) and write its report
 * line (a JSON object and "\n") to OUT_FD; never returns. */
__attribute__ ((noreturn)) void batch_worker (const struct batch_opts *o,
                                              const struct batch_item *it, unsigned try, int out_fd,
                                              int interrupt_fd);
/* The report line of an item that ran to no document (its worker died, or
 * was killed): STATUS (error, interrupted) with WHY. */
char *batch_error_line (const struct batch_item *it, unsigned try, int status, const char *why,
                        size_t *len);

/* ---- batch-report.c */
struct batch_report
{
  int fd;
  char *path;
  bool temporary; /* no --report: a file for the summaries, removed at the end */
};
int batch_report_open (const struct batch_opts *o, struct batch_report *rep, csr_error **err);
/* Append LINE (one JSON object ending in "\n") with one write(2); a short
 * write is undone (ftruncate) so that the report never holds a partial line. */
int batch_report_append (struct batch_report *rep, const char *line, size_t len, csr_error **err);
int batch_report_close (struct batch_report *rep, csr_error **err);
/* --resume: read the report; items whose last line has the same code and
 * options digests and a final status are marked done and counted.  The
 * report is rewritten without the lines that will be run again. */
int batch_resume (struct batch_report *rep, struct batch_items *items, struct batch_counts *c,
                  csr_error **err);
/* The status, duration and label of a report line (a parsed document). */
struct batch_line_info
{
  int status; /* enum csr_status, -1: unknown */
  uint64_t duration_ms;
  char *label, *code_sha256, *options_sha256;
};
int batch_line_parse (const char *line, size_t len, struct batch_line_info *info);
void batch_line_info_release (struct batch_line_info *info);
int batch_status_from_name (const char *name);
/* csrun batch --merge FILES: the last line per label wins; written to
 * OUT (NULL: stdout).  Fills C. */
int batch_merge (char **files, size_t n, const char *out, struct batch_counts *c, csr_error **err);

/* ---- batch-summary.c */
/* The summary table on stderr. */
void batch_print_summary (const struct batch_counts *c, double seconds);
/* --summary FILE.md and --html FILE from the report (only ITEMS' labels;
 * ITEMS NULL: every line). */
int batch_write_summaries (const struct batch_opts *o, const char *report,
                           struct batch_items *items, const struct batch_counts *c, double seconds,
                           csr_error **err);

#endif
