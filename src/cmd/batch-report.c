/* csrun batch: the JSONL report: one line per item, each with one write(2)
 * by the parent only (a short write is cut off again: never a partial line),
 * fsync at the end; --resume reads it back; --merge joins reports. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/json.h"

int
batch_status_from_name (const char *name)
{
  for (int s = 0; s < BATCH_N_STATUS; s++)
    if (name && strcmp (name, csr_status_name ((enum csr_status)s)) == 0)
      return s;
  return -1;
}

int
batch_line_parse (const char *line, size_t len, struct batch_line_info *info)
{
  memset (info, 0, sizeof *info);
  info->status = -1;
  csr_error *e = NULL;
  /* A line of csrun's own: the snippet's output in it may hold NULs. */
  if (len == 0 || csr_json_prescan_opt (line, len, true, &e) < 0)
    {
      csr_error_free (e);
      return -1;
    }
  cleanup_free char *copy = strndup (line, len);
  if (copy == NULL)
    return -1;
  cleanup_yajl_val yajl_val v = yajl_tree_parse (copy, NULL, 0);
  if (v == NULL || !YAJL_IS_OBJECT (v))
    return -1;
  info->status = batch_status_from_name (csr_json_str (csr_json_get (v, "status")));
  yajl_val d = csr_json_get (v, "duration_ms");
  if (d && YAJL_IS_INTEGER (d) && YAJL_GET_INTEGER (d) > 0)
    info->duration_ms = (uint64_t)YAJL_GET_INTEGER (d);
  const char *s = csr_json_str (csr_json_get (v, "label"));
  info->label = s ? strdup (s) : NULL;
  s = csr_json_str (csr_json_get (v, "code_sha256"));
  info->code_sha256 = s ? strdup (s) : NULL;
  s = csr_json_str (csr_json_get (v, "options_sha256"));
  info->options_sha256 = s ? strdup (s) : NULL;
  return info->status >= 0 && info->label ? 0 : -1;
}

void
batch_line_info_release (struct batch_line_info *info)
{
  free (info->label);
  free (info->code_sha256);
  free (info->options_sha256);
  memset (info, 0, sizeof *info);
}

int
batch_report_open (const struct batch_opts *o, struct batch_report *rep, csr_error **err)
{
  memset (rep, 0, sizeof *rep);
  rep->fd = -1;
  if (o->report == NULL)
    {
      const char *tmp = getenv ("TMPDIR");
      if (asprintf (&rep->path, "%s/csrun-batch-XXXXXX", tmp && tmp[0] ? tmp : "/tmp") < 0)
        return csr_error_set (err, ENOMEM, "out of memory");
      rep->fd = mkostemp (rep->path, O_CLOEXEC | O_APPEND);
      if (rep->fd < 0)
        return csr_error_set (err, errno, "cannot make a temporary report in %s",
                              tmp && tmp[0] ? tmp : "/tmp");
      rep->temporary = true;
      return 0;
    }
  rep->path = strdup (o->report);
  if (rep->path == NULL)
    return csr_error_set (err, ENOMEM, "out of memory");
  /* Without --resume a report is started afresh. */
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (o->resume ? 0 : O_TRUNC);
  rep->fd = open (rep->path, flags, 0644);
  if (rep->fd < 0)
    return csr_error_set (err, errno, "cannot open --report '%s'", rep->path);
  return 0;
}

int
batch_report_append (struct batch_report *rep, const char *line, size_t len, csr_error **err)
{
  struct stat st;
  if (fstat (rep->fd, &st) < 0)
    return csr_error_set (err, errno, "cannot stat the report '%s'", rep->path);
  ssize_t w;
  do
    w = write (rep->fd, line, len);
  while (w < 0 && errno == EINTR);
  if (w == (ssize_t)len)
    return 0;
  int saved = w < 0 ? errno : ENOSPC;
  /* A partial line would break every reader (and --resume): take it back. */
  if (w > 0 && ftruncate (rep->fd, st.st_size) < 0)
    return csr_error_set (err, saved,
                          "cannot write the report '%s', and cannot cut the partial line off "
                          "(%s)",
                          rep->path, strerror (errno));
  return csr_error_set (err, saved, "cannot write the report '%s'", rep->path);
}

int
batch_report_close (struct batch_report *rep, csr_error **err)
{
  int rc = 0;
  if (rep->fd >= 0)
    {
      if (!rep->temporary && fsync (rep->fd) < 0)
        rc = csr_error_set (err, errno, "cannot sync the report '%s'", rep->path);
      if (close (rep->fd) < 0 && rc == 0)
        rc = csr_error_set (err, errno, "cannot close the report '%s'", rep->path);
      rep->fd = -1;
    }
  if (rep->temporary && rep->path)
    unlink (rep->path);
  free (rep->path);
  rep->path = NULL;
  return rc;
}

/* A line of the old report is kept when it is an item's result that will
 * not be run again: a final status, the same code and options.  The
 * last line per label decides (earlier ones are dropped). */
int
batch_resume (struct batch_report *rep, struct batch_items *items, struct batch_counts *c,
              csr_error **err)
{
  cleanup_file FILE *f = fopen (rep->path, "re");
  if (f == NULL)
    return csr_error_set (err, errno, "cannot read --report '%s'", rep->path);
  /* The digests of the code as it is now: a changed file runs again. */
  for (size_t i = 0; i < items->n; i++)
    items->v[i].done = false;
  /* Pass 1: the last good line of each item (its offset). */
  size_t *last = calloc (items->n + 1, sizeof *last);
  if (last == NULL)
    return csr_error_set (err, ENOMEM, "out of memory");
  cleanup_free char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  long off = 0;
  size_t lineno = 0;
  while ((n = getline (&line, &cap, f)) >= 0)
    {
      lineno++;
      long here = off;
      off += n;
      if (n == 0 || line[n - 1] != '\n')
        break; /* a cut last line (csrun killed while writing): dropped */
      struct batch_line_info info;
      if (batch_line_parse (line, (size_t)n - 1, &info) < 0)
        {
          batch_line_info_release (&info);
          continue;
        }
      struct batch_item *it = batch_items_find (items, info.label);
      if (it)
        {
          size_t k = (size_t)(it - items->v);
          last[k] = 0;
          it->done = false;
          bool final = info.status != CSR_STATUS_INTERRUPTED && info.status != CSR_STATUS_ERROR;
          if (final && info.options_sha256 && strcmp (info.options_sha256, it->options_sha256) == 0
              && info.code_sha256)
            {
              char now[CSR_SHA256_HEX_LEN + 1] = "";
              cleanup_free char *code = NULL;
              size_t len = 0;
              csr_error *e = NULL;
              if (csr_read_file (it->path, 64ULL << 20, &code, &len, &e) == 0
                  && csr_sha256_buf (code, len, now, &e) == 0
                  && strcmp (now, info.code_sha256) == 0)
                {
                  it->done = true;
                  last[k] = (size_t)here + 1;
                }
              csr_error_free (e);
            }
        }
      batch_line_info_release (&info);
    }
  /* Pass 2: rewrite the report with only those lines (atomically). */
  cleanup_free char *tmp = NULL;
  if (asprintf (&tmp, "%s.resume-XXXXXX", rep->path) < 0)
    {
      free (last);
      return csr_error_set (err, ENOMEM, "out of memory");
    }
  int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    {
      free (last);
      return csr_error_set (err, errno, "cannot rewrite --report '%s'", rep->path);
    }
  rewind (f);
  off = 0;
  int rc = 0;
  while (rc == 0 && (n = getline (&line, &cap, f)) >= 0)
    {
      long here = off;
      off += n;
      if (n == 0 || line[n - 1] != '\n')
        break;
      struct batch_line_info info;
      if (batch_line_parse (line, (size_t)n - 1, &info) == 0)
        {
          struct batch_item *it = batch_items_find (items, info.label);
          size_t k = it ? (size_t)(it - items->v) : 0;
          bool keep = it == NULL /* not in this batch: left alone */
                      || (it->done && last[k] == (size_t)here + 1);
          if (keep && csr_write_all (fd, line, (size_t)n, err) < 0)
            rc = -1;
          if (it && it->done && last[k] == (size_t)here + 1)
            {
              c->by_status[info.status]++;
              c->finished++;
              c->resumed++;
            }
        }
      batch_line_info_release (&info);
    }
  free (last);
  if (rc == 0 && fsync (fd) < 0)
    rc = csr_error_set (err, errno, "cannot sync the rewritten report");
  if (close (fd) < 0 && rc == 0)
    rc = csr_error_set (err, errno, "cannot close the rewritten report");
  if (rc == 0 && rename (tmp, rep->path) < 0)
    rc = csr_error_set (err, errno, "cannot replace --report '%s'", rep->path);
  if (rc < 0)
    {
      unlink (tmp);
      return rc;
    }
  /* Append to the new file from now on. */
  close (rep->fd);
  rep->fd = open (rep->path, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (rep->fd < 0)
    return csr_error_set (err, errno, "cannot open --report '%s'", rep->path);
  (void)lineno;
  return 0;
}

/* ---- --merge */
struct merged
{
  char *label;
  char *line;
  size_t len;
  size_t seq;
};

static int
cmp_merged (const void *a, const void *b)
{
  const struct merged *x = a, *y = b;
  int c = strcmp (x->label, y->label);
  if (c)
    return c;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int
batch_merge (char **files, size_t nfiles, const char *out, struct batch_counts *c, csr_error **err)
{
  struct merged *v = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (size_t i = 0; i < nfiles && rc == 0; i++)
    {
      cleanup_file FILE *f = fopen (files[i], "re");
      if (f == NULL)
        {
          rc = csr_error_set (err, errno, "cannot read '%s'", files[i]);
          break;
        }
      cleanup_free char *line = NULL;
      size_t lcap = 0, no = 0;
      ssize_t len;
      while ((len = getline (&line, &lcap, f)) >= 0)
        {
          no++;
          if (len == 0 || line[len - 1] != '\n')
            {
              fprintf (stderr, "csrun batch: %s:%zu: a cut last line, ignored\n", files[i], no);
              break;
            }
          struct batch_line_info info;
          if (batch_line_parse (line, (size_t)len - 1, &info) < 0)
            {
              batch_line_info_release (&info);
              rc = csr_error_set (err, 0, "%s:%zu: not a csrun batch result", files[i], no);
              break;
            }
          if (n == cap)
            {
              cap = cap ? cap * 2 : 256;
              struct merged *nv = realloc (v, cap * sizeof *nv);
              if (nv == NULL)
                {
                  batch_line_info_release (&info);
                  rc = csr_error_set (err, ENOMEM, "out of memory");
                  break;
                }
              v = nv;
            }
          v[n] = (struct merged){ .label = steal_pointer (&info.label),
                                  .line = strndup (line, (size_t)len),
                                  .len = (size_t)len,
                                  .seq = n };
          n++;
          batch_line_info_release (&info);
        }
    }
  if (rc == 0)
    {
      qsort (v, n, sizeof *v, cmp_merged);
      int fd = STDOUT_FILENO;
      cleanup_free char *tmp = NULL;
      if (out)
        {
          if (asprintf (&tmp, "%s.merge-XXXXXX", out) < 0)
            rc = csr_error_set (err, ENOMEM, "out of memory");
          else if ((fd = mkostemp (tmp, O_CLOEXEC)) < 0)
            rc = csr_error_set (err, errno, "cannot write '%s'", out);
        }
      for (size_t i = 0; rc == 0 && i < n; i++)
        {
          if (i + 1 < n && strcmp (v[i].label, v[i + 1].label) == 0)
            continue; /* a later result of the same item wins */
          if (v[i].line == NULL)
            rc = csr_error_set (err, ENOMEM, "out of memory");
          else
            rc = csr_write_all (fd, v[i].line, v[i].len, err);
          struct batch_line_info info;
          if (rc == 0 && batch_line_parse (v[i].line, v[i].len - 1, &info) == 0)
            {
              c->by_status[info.status]++;
              c->finished++;
              c->total++;
            }
          batch_line_info_release (&info);
        }
      if (out && fd >= 0)
        {
          if (rc == 0 && fsync (fd) < 0)
            rc = csr_error_set (err, errno, "cannot sync '%s'", out);
          if (close (fd) < 0 && rc == 0)
            rc = csr_error_set (err, errno, "cannot close '%s'", out);
          if (rc == 0 && rename (tmp, out) < 0)
            rc = csr_error_set (err, errno, "cannot write '%s'", out);
          if (rc < 0)
            unlink (tmp);
        }
    }
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].label);
      free (v[i].line);
    }
  free (v);
  return rc;
}
