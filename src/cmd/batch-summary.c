/* csrun batch: what a person reads at the end: the summary table on stderr,
 * --summary FILE.md and --html FILE (self-contained: counts, the slowest
 * items, every failure's diagnosis, every heal's diff), all read back from
 * the report so that the parent keeps no result in memory. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json.h"

static const char *
status_name (int s)
{
  return csr_status_name ((enum csr_status)s);
}

void
batch_print_summary (const struct batch_counts *c, double seconds)
{
  fprintf (stderr, "csrun batch: %zu item%s", c->total, c->total == 1 ? "" : "s");
  if (c->resumed)
    fprintf (stderr, " (%zu from the report: --resume)", c->resumed);
  fprintf (stderr, ", %zu finished in %.1f s", c->finished, seconds);
  if (seconds > 0 && c->finished > c->resumed)
    fprintf (stderr, " (%.1f/s)", (double)(c->finished - c->resumed) / seconds);
  fprintf (stderr, "\n  %-12s %8s\n", "status", "items");
  for (int s = 0; s < BATCH_N_STATUS; s++)
    fprintf (stderr, "  %-12s %8zu\n", status_name (s), c->by_status[s]);
  if (c->total > c->finished)
    fprintf (stderr, "  %-12s %8zu\n", "not run", c->total - c->finished);
  if (c->retried)
    fprintf (stderr, "  (%zu item%s run again by --retry-failed)\n", c->retried,
             c->retried == 1 ? "" : "s");
  fflush (stderr);
}

/* Every line of REPORT whose label is in ITEMS (all when NULL), parsed. */
typedef void (*line_fn) (yajl_val v, void *data);

static int
each_line (const char *report, struct batch_items *items, line_fn fn, void *data, csr_error **err)
{
  cleanup_file FILE *f = fopen (report, "re");
  if (f == NULL)
    return csr_error_set (err, errno, "cannot read the report '%s'", report);
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) > 0)
    {
      if (line[n - 1] != '\n')
        break;
      line[n - 1] = '\0';
      csr_error *e = NULL;
      if (csr_json_prescan_opt (line, (size_t)n - 1, true, &e) < 0) /* csrun's own lines */
        {
          csr_error_free (e);
          continue;
        }
      yajl_val v = yajl_tree_parse (line, NULL, 0);
      const char *label = csr_json_str (csr_json_get (v, "label"));
      if (v && label && (items == NULL || batch_items_find (items, label)))
        fn (v, data);
      yajl_tree_free (v);
    }
  return 0;
}

/* ---- the slowest items */
#define N_SLOW 10
struct slow
{
  char *label[N_SLOW];
  int status[N_SLOW];
  long long ms[N_SLOW];
  size_t n;
};

static void
collect_slow (yajl_val v, void *data)
{
  struct slow *s = data;
  yajl_val d = csr_json_get (v, "duration_ms");
  long long ms = d && YAJL_IS_INTEGER (d) ? YAJL_GET_INTEGER (d) : 0;
  size_t at = s->n;
  while (at > 0 && s->ms[at - 1] < ms)
    at--;
  if (at >= N_SLOW)
    return;
  if (s->n == N_SLOW)
    free (s->label[N_SLOW - 1]);
  else
    s->n++;
  memmove (&s->label[at + 1], &s->label[at], (s->n - 1 - at) * sizeof s->label[0]);
  memmove (&s->ms[at + 1], &s->ms[at], (s->n - 1 - at) * sizeof s->ms[0]);
  memmove (&s->status[at + 1], &s->status[at], (s->n - 1 - at) * sizeof s->status[0]);
  s->label[at] = strdup (csr_json_str (csr_json_get (v, "label")));
  s->ms[at] = ms;
  s->status[at] = batch_status_from_name (csr_json_str (csr_json_get (v, "status")));
}

/* ---- writers: Markdown or HTML, escaping everything from the snippets */
struct out
{
  FILE *f;
  bool html;
  int what; /* 0: failures, 1: heals */
  size_t count;
};

static void
put_html (FILE *f, const char *s)
{
  for (; s && *s; s++)
    switch (*s)
      {
      case '<':
        fputs ("&lt;", f);
        break;
      case '>':
        fputs ("&gt;", f);
        break;
      case '&':
        fputs ("&amp;", f);
        break;
      case '"':
        fputs ("&quot;", f);
        break;
      case '\'':
        fputs ("&#39;", f);
        break;
      default:
        fputc (*s, f);
      }
}

/* Text in a Markdown table cell or heading: no markup from the snippet. */
static void
put_md (FILE *f, const char *s)
{
  for (; s && *s; s++)
    {
      if (*s == '\n' || *s == '\r')
        fputc (' ', f);
      else if (strchr ("\\`*_{}[]()<>#+-.!|~", *s))
        fprintf (f, "\\%c", *s);
      else
        fputc (*s, f);
    }
}

/* A block of text (a diff, a traceback context) in a fence that no line of
 * it can close: longer than any backtick run inside. */
static void
put_md_block (FILE *f, const char *s, const char *lang)
{
  size_t run = 0, longest = 0;
  for (const char *p = s; p && *p; p++)
    {
      run = *p == '`' ? run + 1 : 0;
      if (run > longest)
        longest = run;
    }
  size_t fence = longest < 3 ? 3 : longest + 1;
  for (size_t i = 0; i < fence; i++)
    fputc ('`', f);
  fprintf (f, "%s\n%s%s", lang, s ? s : "", s && s[0] && s[strlen (s) - 1] == '\n' ? "" : "\n");
  for (size_t i = 0; i < fence; i++)
    fputc ('`', f);
  fputc ('\n', f);
}

static void
put (struct out *o, const char *s)
{
  if (o->html)
    put_html (o->f, s);
  else
    put_md (o->f, s);
}

static void
write_failure (yajl_val v, void *data)
{
  struct out *o = data;
  int st = batch_status_from_name (csr_json_str (csr_json_get (v, "status")));
  if (st == CSR_STATUS_OK || st == CSR_STATUS_HEALED)
    return;
  o->count++;
  const char *label = csr_json_str (csr_json_get (v, "label"));
  yajl_val d = csr_json_get (v, "diagnosis");
  const char *type = csr_json_str (csr_json_get (d, "error_type"));
  const char *msg = csr_json_str (csr_json_get (d, "message"));
  const char *ctx = csr_json_str (csr_json_get (d, "context"));
  const char *error = csr_json_str (csr_json_get (v, "error"));
  yajl_val line = csr_json_get (d, "line");
  char where[40] = "";
  if (line && YAJL_IS_INTEGER (line))
    snprintf (where, sizeof where, " (line %lld)", YAJL_GET_INTEGER (line));
  if (o->html)
    {
      fputs ("<div class=\"item fail\"><h3>", o->f);
      put (o, label);
      fprintf (o->f, " <span class=\"st\">%s</span></h3>\n<p>", status_name (st));
      put (o, type ? type : error ? "error" : "no diagnosis");
      if (msg || error)
        fputs (": ", o->f);
      put (o, msg ? msg : error);
      put (o, where);
      fputs ("</p>\n", o->f);
      if (ctx)
        {
          fputs ("<pre>", o->f);
          put (o, ctx);
          fputs ("</pre>\n", o->f);
        }
      fputs ("</div>\n", o->f);
    }
  else
    {
      fputs ("### ", o->f);
      put (o, label);
      fprintf (o->f, " (%s)\n\n", status_name (st));
      put (o, type ? type : error ? "error" : "no diagnosis");
      if (msg || error)
        fputs (": ", o->f);
      put (o, msg ? msg : error);
      put (o, where);
      fputs ("\n\n", o->f);
      if (ctx)
        {
          put_md_block (o->f, ctx, "");
          fputc ('\n', o->f);
        }
    }
}

static void
write_heal (yajl_val v, void *data)
{
  struct out *o = data;
  int st = batch_status_from_name (csr_json_str (csr_json_get (v, "status")));
  if (st != CSR_STATUS_HEALED)
    return;
  o->count++;
  const char *label = csr_json_str (csr_json_get (v, "label"));
  yajl_val atts = csr_json_get (v, "attempts");
  if (o->html)
    {
      fputs ("<div class=\"item heal\"><h3>", o->f);
      put (o, label);
      fputs ("</h3>\n", o->f);
    }
  else
    {
      fputs ("### ", o->f);
      put (o, label);
      fputs ("\n\n", o->f);
    }
  for (size_t i = 0; atts && YAJL_IS_ARRAY (atts) && i < atts->u.array.len; i++)
    {
      yajl_val p = csr_json_get (atts->u.array.values[i], "patch");
      if (p == NULL)
        continue;
      const char *src = csr_json_str (csr_json_get (p, "source"));
      const char *rules = csr_json_str (csr_json_get (p, "rules"));
      const char *diff = csr_json_str (csr_json_get (p, "diff"));
      if (o->html)
        {
          fprintf (o->f, "<p>attempt %zu: ", i + 1);
          put (o, src ? src : "?");
          if (rules)
            {
              fputs (" (", o->f);
              put (o, rules);
              fputs (")", o->f);
            }
          fputs ("</p>\n<pre class=\"diff\">", o->f);
          put (o, diff);
          fputs ("</pre>\n", o->f);
        }
      else
        {
          fprintf (o->f, "attempt %zu: ", i + 1);
          put (o, src ? src : "?");
          if (rules)
            {
              fputs (" (", o->f);
              put (o, rules);
              fputs (")", o->f);
            }
          fputs ("\n\n", o->f);
          put_md_block (o->f, diff, "diff");
          fputc ('\n', o->f);
        }
    }
  if (o->html)
    fputs ("</div>\n", o->f);
}

static const char css[]
    = "body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}"
      "pre{background:#f4f4f4;padding:.5em;overflow-x:auto}.st{color:#a00;font-size:80%}"
      ".fail h3{color:#a00}.heal h3{color:#06a}";

static int
write_one (const char *path, bool html, const char *report, struct batch_items *items,
           const struct batch_counts *c, double seconds, csr_error **err)
{
  struct slow slow = { 0 };
  if (each_line (report, items, collect_slow, &slow, err) < 0)
    return -1;
  cleanup_free char *tmp = NULL;
  if (asprintf (&tmp, "%s.tmp-XXXXXX", path) < 0)
    return csr_error_set (err, ENOMEM, "out of memory");
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return csr_error_set (err, errno, "cannot write '%s'", path);
  FILE *f = fdopen (fd, "w");
  if (f == NULL)
    {
      close (fd);
      unlink (tmp);
      return csr_error_set (err, errno, "cannot write '%s'", path);
    }
  struct out o = { .f = f, .html = html };
  if (html)
    fprintf (f,
             "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>csrun batch "
             "report</title><style>%s</style></head><body>\n<h1>csrun batch report</h1>\n"
             "<p>%zu items, %zu finished in %.1f s</p>\n<h2>Counts</h2>\n<table id=\"counts\">"
             "<tr><th>status</th><th>items</th></tr>\n",
             css, c->total, c->finished, seconds);
  else
    fprintf (f,
             "# csrun batch report\n\n%zu items, %zu finished in %.1f s\n\n## Counts\n\n"
             "| status | items |\n|---|---:|\n",
             c->total, c->finished, seconds);
  for (int s = 0; s < BATCH_N_STATUS; s++)
    fprintf (f, html ? "<tr><td>%s</td><td class=\"n-%s\">%zu</td></tr>\n" : "| %s |%.0s %zu |\n",
             status_name (s), status_name (s), c->by_status[s]);
  if (c->total > c->finished)
    fprintf (f, html ? "<tr><td>not run</td><td>%zu</td></tr>\n" : "| not run | %zu |\n",
             c->total - c->finished);
  fputs (html ? "</table>\n<h2>Slowest items</h2>\n<table><tr><th>item</th><th>status</th>"
                "<th>ms</th></tr>\n"
              : "\n## Slowest items\n\n| item | status | ms |\n|---|---|---:|\n",
         f);
  for (size_t i = 0; i < slow.n; i++)
    {
      fputs (html ? "<tr><td>" : "| ", f);
      put (&o, slow.label[i]);
      fprintf (f, html ? "</td><td>%s</td><td>%lld</td></tr>\n" : " | %s | %lld |\n",
               slow.status[i] >= 0 ? status_name (slow.status[i]) : "?", slow.ms[i]);
      free (slow.label[i]);
    }
  fputs (html ? "</table>\n<h2>Failures</h2>\n" : "\n## Failures\n\n", f);
  int rc = each_line (report, items, write_failure, &o, err);
  if (rc == 0 && o.count == 0)
    fputs (html ? "<p>none</p>\n" : "none\n\n", f);
  fputs (html ? "<h2>Heals</h2>\n" : "## Heals\n\n", f);
  o.count = 0;
  if (rc == 0)
    rc = each_line (report, items, write_heal, &o, err);
  if (rc == 0 && o.count == 0)
    fputs (html ? "<p>none</p>\n" : "none\n", f);
  if (html)
    fputs ("</body></html>\n", f);
  if (rc == 0 && (fflush (f) != 0 || ferror (f) || fsync (fileno (f)) < 0))
    rc = csr_error_set (err, errno, "cannot write '%s'", path);
  if (fclose (f) != 0 && rc == 0)
    rc = csr_error_set (err, errno, "cannot write '%s'", path);
  if (rc == 0 && chmod (tmp, 0644) == 0 && rename (tmp, path) < 0)
    rc = csr_error_set (err, errno, "cannot write '%s'", path);
  if (rc < 0)
    unlink (tmp);
  return rc;
}

int
batch_write_summaries (const struct batch_opts *o, const char *report, struct batch_items *items,
                       const struct batch_counts *c, double seconds, csr_error **err)
{
  if (o->summary_md && write_one (o->summary_md, false, report, items, c, seconds, err) < 0)
    return -1;
  if (o->html && write_one (o->html, true, report, items, c, seconds, err) < 0)
    return -1;
  return 0;
}
