/* csrun — sandbox_checkpoint's and sandbox_restore's texts (tool-impl.h):
 * what the model reads of `csrun sandbox checkpoint --json` and `csrun
 * sandbox restore --json`. */
#include "config.h"
#include "tool-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "3 files, 2 directories, 1 symbolic link (120 bytes)" of a layer's counts. */
static void
layer_line (FILE *f, yajl_val layer)
{
  static const struct
  {
    const char *key, *one, *many;
  } kinds[] = {
    { "files", "file", "files" },
    { "dirs", "directory", "directories" },
    { "symlinks", "symbolic link", "symbolic links" },
    { "whiteouts", "deleted file of the rootfs", "deleted files of the rootfs" },
  };
  const char *sep = "";
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    {
      long long n = csr_json_int (layer, kinds[i].key, 0);
      if (n == 0 && i > 0)
        continue;
      fprintf (f, "%s%lld %s", sep, n, n == 1 ? kinds[i].one : kinds[i].many);
      sep = ", ";
    }
  fprintf (f, " (%lld bytes)", csr_json_int (layer, "bytes", 0));
}

/* The strings of the array LIST as lines "TITLE (N): a; b; c", at most a
 * few hundred bytes each; TOTAL: how many there were in all. */
static void
list_line (FILE *f, const char *title, yajl_val list, long long total)
{
  size_t n = list && YAJL_IS_ARRAY (list) ? list->u.array.len : 0;
  if (n == 0 && total <= 0)
    return;
  fprintf (f, "\n%s (%lld):", title, total > (long long)n ? total : (long long)n);
  for (size_t i = 0; i < n && i < 20; i++)
    {
      const char *t = csr_json_str (list->u.array.values[i]);
      fprintf (f, "%s %.300s", i ? ";" : "", t ? t : "?");
    }
  if (n > 20 || total > (long long)n)
    fprintf (f, "; ...");
}

/* The names in the array LIST (strings, or objects with a name), at
 * most 20, after SEP. */
static void
names_of (FILE *f, yajl_val list, const char *sep)
{
  size_t n = list && YAJL_IS_ARRAY (list) ? list->u.array.len : 0;
  for (size_t i = 0; i < n && i < 20; i++)
    {
      yajl_val v = list->u.array.values[i];
      const char *t = YAJL_IS_STRING (v) ? v->u.string : csr_json_str (csr_json_get (v, "name"));
      fprintf (f, "%s%.100s", i ? ", " : sep, t ? t : "?");
    }
  if (n > 20)
    fprintf (f, ", ...");
}

/* The sessions' globals a checkpoint saved (KEY "saved") or a restore
 * loaded ("loaded"): one line per session, when the document has them
 * (csrun sandbox checkpoint/restore --json's "sessions"). */
static void
sessions_lines (FILE *f, yajl_val sessions, const char *key, const char *title)
{
  size_t n = sessions && YAJL_IS_ARRAY (sessions) ? sessions->u.array.len : 0;
  if (n == 0)
    return;
  fprintf (f, "\n%s:", title);
  for (size_t i = 0; i < n && i < 32; i++)
    {
      yajl_val x = sessions->u.array.values[i];
      const char *name = csr_json_str (csr_json_get (x, "name"));
      const char *err = csr_json_str (csr_json_get (x, "error"));
      fprintf (f, "\n- session '%.64s': ", name ? name : "?");
      if (err)
        {
          fprintf (f, "failed (%.300s)", err);
          continue;
        }
      yajl_val done = csr_json_get (x, key), skipped = csr_json_get (x, "skipped");
      size_t nd = done && YAJL_IS_ARRAY (done) ? done->u.array.len : 0;
      fprintf (f, "%zu global%s", nd, nd == 1 ? "" : "s");
      names_of (f, done, " (");
      fprintf (f, "%s", nd ? ")" : "");
      if (skipped && YAJL_IS_ARRAY (skipped) && skipped->u.array.len > 0)
        names_of (f, skipped, "; not: ");
    }
  if (n > 32)
    fprintf (f, "\n- ...");
}

/* The text written to F (a memory stream whose buffer is *BUF), or NULL
 * (malloc'ed). */
static char *
finish (FILE *f, char **buf)
{
  bool bad = ferror (f) != 0;
  if (fclose (f) != 0 || bad)
    {
      free (*buf);
      return NULL;
    }
  return *buf;
}

char *
csr_mcp_sandbox_checkpoint_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val doc = o->doc;
  const char *id = csr_json_str (csr_json_get (doc, "id"));
  yajl_val sbx = csr_json_get (doc, "sandbox");
  const char *sid = csr_json_str (csr_json_get (sbx, "id"));
  *is_error = id == NULL || sid == NULL;
  if (*is_error)
    return csr_mcp_command_failure_text ("csrun sandbox checkpoint", o);
  const char *name = csr_json_str (csr_json_get (sbx, "name"));
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&s, &len);
  if (f == NULL)
    return NULL;
  fprintf (f, "Checkpoint %s saved what was written in sandbox %s%s%s%s: ", id, sid,
           name ? " (" : "", name ? name : "", name ? ")" : "");
  layer_line (f, csr_json_get (doc, "layer"));
  fprintf (f, "; not its running processes, nor /tmp.");
  long long expires = csr_json_int (doc, "expires", 0);
  if (expires > 0)
    {
      time_t t = (time_t)expires;
      struct tm tm;
      char when[32] = "?";
      if (gmtime_r (&t, &tm))
        strftime (when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
      fprintf (f, " It expires at %s.", when);
    }
  else
    fprintf (f, " It does not expire.");
  if (YAJL_IS_TRUE (csr_json_get (doc, "stopped")))
    fprintf (f,
             " The sandbox is stopped now (its processes ended, its files kept; it runs no "
             "more commands): make a new running sandbox from the checkpoint with "
             "sandbox_restore (checkpoint: \"%s\").",
             id);
  else
    fprintf (f,
             " The sandbox goes on running. sandbox_restore (checkpoint: \"%s\") makes a new "
             "sandbox with these files.",
             id);
  list_line (f, "Not saved", csr_json_get (doc, "not_saved"),
             csr_json_int (doc, "not_saved_total", 0));
  sessions_lines (f, csr_json_get (doc, "sessions"), "saved",
                  "The sessions' variables saved with it (sandbox_restore loads them into "
                  "sessions of the same names)");
  return finish (f, &s);
}

char *
csr_mcp_sandbox_restore_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val doc = o->doc;
  const char *id = csr_json_str (csr_json_get (doc, "id"));
  *is_error = id == NULL;
  if (id == NULL)
    return csr_mcp_command_failure_text ("csrun sandbox restore", o);
  const char *name = csr_json_str (csr_json_get (doc, "name"));
  const char *ck = csr_json_str (csr_json_get (doc, "checkpoint"));
  char *s = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&s, &len);
  if (f == NULL)
    return NULL;
  fprintf (f, "Restored checkpoint %s as a new sandbox %s%s%s%s, running: ", ck ? ck : "?", id,
           name ? " (name " : "", name ? name : "", name ? ")" : "");
  layer_line (f, csr_json_get (doc, "layer"));
  fprintf (f,
           ". The processes of the checkpointed sandbox do not run in it. Use it as any "
           "sandbox (sandbox: \"%s\") and remove it with sandbox_terminate.",
           name ? name : id);
  list_line (f, "Not restored", csr_json_get (doc, "not_restored"), 0);
  sessions_lines (f, csr_json_get (doc, "sessions"), "loaded",
                  "Sessions started again with their saved variables (sandbox_run with the "
                  "same session)");
  const char *warn = csr_json_str (csr_json_get (doc, "warning"));
  if (warn)
    fprintf (f, "\nWarning: %s", warn);
  return finish (f, &s);
}
