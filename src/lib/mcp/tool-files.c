/* csrun — the sandbox file tools' rules and texts (tool-impl.h):
 * sandbox_write_file (csrun sandbox write --json, the content on its
 * standard input), sandbox_read_file (csrun sandbox read: the raw bytes,
 * given back as text or base64) and sandbox_list_files (csrun sandbox ls
 * or find --json). */
#include "config.h"
#include "tool-impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../util/base64.h"
#include "../util/cleanup.h"
#include "../util/utf8.h"

/* The document W wrote, as a tree (NULL: out of memory). */
static yajl_val
tree_of (struct csr_jgen *w)
{
  size_t len = 0;
  cleanup_free char *text = csr_jgen_finish (w, "the structured result", &len, NULL);
  if (text == NULL)
    return NULL;
  char yerr[64];
  return yajl_tree_parse (text, yerr, sizeof yerr);
}

static const char *
arg_str (const struct csr_mcp_output *o, const char *key)
{
  const char *s = csr_json_str (csr_json_get (o->args, key));
  return s ? s : "";
}

/* ------------------------------------------------------------ sandbox_write_file */

int
csr_mcp_sandbox_write_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  (void)lim;
  yajl_val c = csr_json_get (args, "content"), b = csr_json_get (args, "content_base64");
  bool has_c = c && !YAJL_IS_NULL (c), has_b = b && !YAJL_IS_NULL (b);
  if (has_c == has_b)
    return csr_jpath_fail (x,
                           "give either content (text) or content_base64 (bytes in base64), "
                           "not %s",
                           has_c ? "both" : "neither");
  return 0;
}

char *
csr_mcp_sandbox_write_text (struct csr_mcp_output *o, bool *is_error)
{
  const char *path = csr_json_str (csr_json_get (o->doc, "path"));
  yajl_val bytes = csr_json_get (o->doc, "bytes");
  *is_error = path == NULL || bytes == NULL || !YAJL_IS_INTEGER (bytes);
  if (*is_error)
    return csr_mcp_command_failure_text ("csrun sandbox write", o);
  char *s = NULL;
  if (asprintf (&s, "Wrote %lld bytes to %s.", YAJL_GET_INTEGER (bytes), path) < 0)
    return NULL;
  return s;
}

/* ------------------------------------------------------------ sandbox_read_file */

double
csr_mcp_read_max (const struct csr_mcp_limits *lim)
{
  /* The content is in the text and in the structured result, base64 makes
   * 4 bytes of 3 and JSON escapes some characters: an eighth of the
   * largest message leaves room for all of it. */
  return (double)(csr_mcp_max_frame (lim) / 8);
}

void
csr_mcp_sandbox_read_args (yajl_val args, const struct csr_mcp_limits *lim, struct csr_mcp_argv *av)
{
  yajl_val m = csr_json_get (args, "max_bytes");
  double n = m && !YAJL_IS_NULL (m) ? csr_mcp_number (m) : csr_mcp_read_max (lim);
  csr_mcp_argv_addf (av, "--max-size=%llu", (unsigned long long)n);
}

/* Why the read failed; a file over the cap says which argument it was. */
static char *
read_failure (const struct csr_mcp_output *o)
{
  if (o->out_cut)
    return strdup ("csrun sandbox read: the file is larger than the largest message (csrun "
                   "mcp --max-frame)");
  cleanup_free char *s = csr_mcp_command_failure_text ("csrun sandbox read", o);
  char *cap = s ? strstr (s, "(--max-size)") : NULL;
  if (cap == NULL)
    return steal_pointer (&s);
  char *r = NULL;
  if (asprintf (&r,
                "%.*s(max_bytes). Read a part of it with sandbox_exec (e.g. head -c, tail -c, "
                "sed -n).",
                (int)(cap - s), s)
      < 0)
    return NULL;
  return r;
}

char *
csr_mcp_sandbox_read_text (struct csr_mcp_output *o, bool *is_error)
{
  *is_error = true;
  if (!WIFEXITED (o->status) || WEXITSTATUS (o->status) != 0 || o->out_cut)
    return read_failure (o);
  /* Text when the bytes are UTF-8 without NUL, else base64. */
  bool text = memchr (o->out, '\0', o->out_len) == NULL && csr_utf8_valid (o->out, o->out_len);
  cleanup_free char *b64 = text ? NULL : csr_base64_encode (o->out, o->out_len, NULL);
  if (!text && b64 == NULL)
    return NULL;
  const char *path = arg_str (o, "path");
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "sandbox", arg_str (o, "sandbox"));
  csr_jgen_kv_str (&w, "path", path);
  csr_jgen_kv_int (&w, "bytes", (long long)o->out_len);
  csr_jgen_kv_str (&w, "encoding", text ? "utf-8" : "base64");
  csr_jgen_kv_str (&w, "content", text ? o->out : b64);
  csr_jgen_map_close (&w);
  if ((o->structured = tree_of (&w)) == NULL)
    return NULL;
  *is_error = false;
  if (text)
    return strdup (o->out);
  char *s = NULL;
  if (asprintf (&s, "%s is %zu bytes of binary data (not UTF-8 text). In base64:\n%s", path,
                o->out_len, b64)
      < 0)
    return NULL;
  return s;
}

/* ------------------------------------------------------------ sandbox_list_files */

double
csr_mcp_list_max (const struct csr_mcp_limits *lim)
{
  /* An entry is about 150 bytes of JSON and a line of text. */
  return (double)(csr_mcp_max_frame (lim) / 512);
}

#define LIST_DEFAULT 500

static const char *const find_cmd[] = { "sandbox", "find", "--json", NULL };

static bool
has_pattern (yajl_val args)
{
  yajl_val p = csr_json_get (args, "pattern");
  return p && !YAJL_IS_NULL (p);
}

const char *const *
csr_mcp_sandbox_list_find (yajl_val args)
{
  return has_pattern (args) ? find_cmd : NULL;
}

int
csr_mcp_sandbox_list_check (yajl_val args, const struct csr_mcp_limits *lim, struct csr_jpath *x)
{
  (void)lim;
  if (has_pattern (args) && YAJL_IS_FALSE (csr_json_get (args, "recursive")))
    {
      csr_jpath_push_key (x, "recursive");
      return csr_jpath_fail (x, "false with a pattern: a pattern is searched for in the whole "
                                "tree below path (leave recursive out)");
    }
  return 0;
}

void
csr_mcp_sandbox_list_args (yajl_val args, const struct csr_mcp_limits *lim, struct csr_mcp_argv *av)
{
  yajl_val m = csr_json_get (args, "max_entries");
  double max = csr_mcp_list_max (lim);
  double n = m && !YAJL_IS_NULL (m) ? csr_mcp_number (m) : LIST_DEFAULT < max ? LIST_DEFAULT : max;
  csr_mcp_argv_addf (av, "--max-entries=%llu", (unsigned long long)n);
  if (!has_pattern (args) && YAJL_IS_TRUE (csr_json_get (args, "recursive")))
    csr_mcp_argv_add (av, "--recursive");
}

/* "drwxr-xr-x" from an entry's type and mode ("0755"). */
static void
mode_string (const char *type, const char *mode, char s[11])
{
  static const struct
  {
    const char *name;
    char c;
  } types[] = { { "file", '-' },   { "dir", 'd' },  { "symlink", 'l' }, { "fifo", 'p' },
                { "socket", 's' }, { "char", 'c' }, { "block", 'b' } };
  s[0] = '?';
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (type && strcmp (type, types[i].name) == 0)
      s[0] = types[i].c;
  unsigned long m = mode ? strtoul (mode, NULL, 8) : 0;
  static const char rwx[] = "rwxrwxrwx";
  for (int i = 0; i < 9; i++)
    s[1 + i] = (m & (0400u >> i)) ? rwx[i] : '-';
  s[10] = '\0';
}

/* One line of the listing on F, as ls -l has it (FIND: the whole path). */
static int
add_line (FILE *f, yajl_val e, bool find)
{
  const char *type = csr_json_str (csr_json_get (e, "type"));
  const char *name = csr_json_str (csr_json_get (e, find ? "path" : "name"));
  const char *target = csr_json_str (csr_json_get (e, "target"));
  yajl_val size = csr_json_get (e, "size");
  char mode[11];
  mode_string (type, csr_json_str (csr_json_get (e, "mode")), mode);
  return fprintf (f, "%s %10lld %s %s%s%s%s\n", mode,
                  size && YAJL_IS_INTEGER (size) ? YAJL_GET_INTEGER (size) : 0LL,
                  csr_json_str (csr_json_get (e, "mtime")) ?: "?", name ? name : "?",
                  type && strcmp (type, "dir") == 0 ? "/" : "", target ? " -> " : "",
                  target ? target : "");
}

/* The document with find's "matches" called "entries", as ls has them:
 * one shape for the output schema. */
static yajl_val
rename_matches (yajl_val doc)
{
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return NULL;
  csr_jgen_map_open (&w);
  for (size_t i = 0; i < doc->u.object.len; i++)
    {
      const char *k = doc->u.object.keys[i];
      csr_jgen_str (&w, strcmp (k, "matches") == 0 ? "entries" : k);
      csr_jgen_tree (&w, doc->u.object.values[i]);
    }
  csr_jgen_map_close (&w);
  return tree_of (&w);
}

char *
csr_mcp_sandbox_list_text (struct csr_mcp_output *o, bool *is_error)
{
  yajl_val doc = o->doc;
  bool find = csr_json_get (doc, "matches") != NULL;
  yajl_val entries = csr_json_get (doc, find ? "matches" : "entries");
  const char *path = csr_json_str (csr_json_get (doc, "path"));
  *is_error = true;
  if (entries == NULL || !YAJL_IS_ARRAY (entries) || path == NULL)
    return csr_mcp_command_failure_text (find ? "csrun sandbox find" : "csrun sandbox ls", o);
  if (find && (o->structured = rename_matches (doc)) == NULL)
    return NULL;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&text, &len);
  if (f == NULL)
    return NULL;
  size_t n = entries->u.array.len;
  const char *type = csr_json_str (csr_json_get (doc, "type"));
  if (find)
    fprintf (f, "%zu entr%s below %s matching '%s':\n", n, n == 1 ? "y" : "ies", path,
             csr_json_str (csr_json_get (doc, "pattern")) ?: "");
  else if (type && strcmp (type, "dir") != 0)
    fprintf (f, "%s:\n", path);
  else
    fprintf (f, "%s: %zu entr%s\n", path, n, n == 1 ? "y" : "ies");
  for (size_t i = 0; i < n; i++)
    add_line (f, entries->u.array.values[i], find);
  if (YAJL_IS_TRUE (csr_json_get (doc, "truncated")))
    fprintf (f,
             "(stopped after %zu entries: max_entries; list a directory below, or use a "
             "pattern)\n",
             n);
  yajl_val skipped = csr_json_get (doc, "skipped");
  for (size_t i = 0; skipped && YAJL_IS_ARRAY (skipped) && i < skipped->u.array.len; i++)
    {
      yajl_val s = skipped->u.array.values[i];
      fprintf (f, "(not entered: %s: %s)\n", csr_json_str (csr_json_get (s, "path")) ?: "?",
               csr_json_str (csr_json_get (s, "reason")) ?: "?");
    }
  yajl_val more = csr_json_get (doc, "skipped_more");
  if (more && YAJL_IS_INTEGER (more) && YAJL_GET_INTEGER (more) > 0)
    fprintf (f, "(and %lld more not entered)\n", YAJL_GET_INTEGER (more));
  bool bad = ferror (f) != 0;
  if (fclose (f) != 0 || bad)
    {
      free (text);
      return NULL;
    }
  /* without the last newline */
  if (len > 0 && text[len - 1] == '\n')
    text[len - 1] = '\0';
  *is_error = false;
  return text;
}
