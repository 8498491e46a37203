/* csrun batch: the item list: files, directories (every *.py below, sorted),
 * manifest lines; unique labels; the shard to run. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "batch.h"
#include "util/cleanup.h"
#include "util/json-gen.h"
#include "util/json.h"
#include "util/parse.h"
#include "util/utf8.h"

static int
push_item (struct batch_items *items, char *path, char *label, char *line, size_t line_no,
           uint64_t memory, csr_error **err)
{
  if (items->n == items->cap)
    {
      size_t cap = items->cap ? items->cap * 2 : 64;
      struct batch_item *v = realloc (items->v, cap * sizeof *v);
      if (v == NULL)
        {
          free (path);
          free (label);
          free (line);
          return csr_error_set (err, ENOMEM, "out of memory");
        }
      items->v = v;
      items->cap = cap;
    }
  items->v[items->n] = (struct batch_item){ .path = path,
                                            .label = label,
                                            .line = line,
                                            .line_no = line_no,
                                            .memory = memory,
                                            .index = items->n };
  items->n++;
  return 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* Every *.py below DIR (symlinks not followed), sorted, appended to ITEMS. */
static int
walk_dir (const char *dir, struct batch_items *items, uint64_t memory, csr_error **err)
{
  cleanup_dir DIR *d = opendir (dir);
  if (d == NULL)
    return csr_error_set (err, errno, "cannot read the directory '%s'", dir);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  int rc = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (de->d_name[0] == '.')
        continue; /* ., .. and hidden files */
      if (n == cap)
        {
          cap = cap ? cap * 2 : 32;
          char **v = realloc (names, cap * sizeof *v);
          if (v == NULL)
            {
              rc = csr_error_set (err, ENOMEM, "out of memory");
              goto out;
            }
          names = v;
        }
      names[n] = strdup (de->d_name);
      if (names[n] == NULL)
        {
          rc = csr_error_set (err, ENOMEM, "out of memory");
          goto out;
        }
      n++;
    }
  qsort (names, n, sizeof *names, cmp_str);
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      char *p = NULL;
      if (asprintf (&p, "%s/%s", dir, names[i]) < 0)
        {
          rc = csr_error_set (err, ENOMEM, "out of memory");
          break;
        }
      struct stat st;
      if (lstat (p, &st) < 0)
        {
          rc = csr_error_set (err, errno, "cannot stat '%s'", p);
          free (p);
          break;
        }
      size_t len = strlen (names[i]);
      if (S_ISDIR (st.st_mode))
        {
          rc = walk_dir (p, items, memory, err);
          free (p);
        }
      else if (S_ISREG (st.st_mode) && len > 3 && strcmp (names[i] + len - 3, ".py") == 0)
        {
          char *label = strdup (p);
          rc = label ? push_item (items, p, label, NULL, 0, memory, err)
                     : csr_error_set (err, ENOMEM, "out of memory");
        }
      else
        free (p);
    }
out:
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  return rc;
}

/* A path from a manifest: relative ones are relative to the manifest's directory. */
static char *
manifest_path (const char *manifest, const char *p)
{
  if (p[0] == '/')
    return strdup (p);
  const char *slash = strrchr (manifest, '/');
  if (slash == NULL)
    return strdup (p);
  char *r = NULL;
  if (asprintf (&r, "%.*s/%s", (int)(slash - manifest), manifest, p) < 0)
    return NULL;
  return r;
}

static const char *const manifest_keys[]
    = { "path", "label", "args", "env", "in", "out", "timeout", "memory", "stdin", NULL };

/* One manifest line (JSON): checked now (so that a bad line is found before
 * anything runs), re-read by the worker.  *WHY: what is wrong. */
static int
parse_manifest_line (const char *manifest, char *line, size_t len, uint64_t base_memory,
                     char **path, char **label, uint64_t *memory, char *why, size_t why_len)
{
  csr_error *e = NULL;
  if (csr_json_prescan (line, len, &e) < 0)
    {
      snprintf (why, why_len, "%s", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  char yerr[200] = "";
  cleanup_yajl_val yajl_val v = yajl_tree_parse (line, yerr, sizeof yerr);
  if (v == NULL || !YAJL_IS_OBJECT (v))
    {
      snprintf (why, why_len, "not a JSON object%s%.*s", yerr[0] ? ": " : "",
                (int)strcspn (yerr, "\n"), yerr);
      return -1;
    }
  for (size_t i = 0; i < v->u.object.len; i++)
    {
      const char *k = v->u.object.keys[i];
      bool known = false;
      for (size_t j = 0; manifest_keys[j]; j++)
        known = known || strcmp (k, manifest_keys[j]) == 0;
      if (!known)
        {
          snprintf (why, why_len, "unknown key '%.40s'", k);
          return -1;
        }
    }
  const char *p = csr_json_str (csr_json_get (v, "path"));
  if (p == NULL || p[0] == '\0')
    {
      snprintf (why, why_len, "\"path\" (a string) is required");
      return -1;
    }
  yajl_val l = csr_json_get (v, "label");
  if (l && !YAJL_IS_STRING (l))
    {
      snprintf (why, why_len, "\"label\" must be a string");
      return -1;
    }
  const char *names[] = { "args", "env", "in" };
  for (size_t i = 0; i < 3; i++)
    {
      yajl_val a = csr_json_get (v, names[i]);
      if (a == NULL)
        continue;
      bool good = YAJL_IS_ARRAY (a);
      for (size_t j = 0; good && j < a->u.array.len; j++)
        good = YAJL_IS_STRING (a->u.array.values[j]);
      if (!good)
        {
          snprintf (why, why_len, "\"%s\" must be an array of strings", names[i]);
          return -1;
        }
    }
  for (size_t j = 0; csr_json_get (v, "env") && j < csr_json_get (v, "env")->u.array.len; j++)
    {
      size_t klen;
      bool hv;
      if (csr_parse_env (csr_json_get (v, "env")->u.array.values[j]->u.string, &klen, &hv, &e) < 0)
        {
          snprintf (why, why_len, "\"env\": %s", csr_error_text (e));
          csr_error_free (e);
          return -1;
        }
    }
  yajl_val in = csr_json_get (v, "in");
  for (size_t j = 0; in && j < in->u.array.len; j++)
    {
      struct csr_in_arg a = { 0 };
      if (csr_in_arg_parse (in->u.array.values[j]->u.string, &a, &e) < 0)
        {
          snprintf (why, why_len, "\"in\": %s", csr_error_text (e));
          csr_error_free (e);
          return -1;
        }
      csr_in_arg_release (&a);
    }
  const char *strs[] = { "out", "timeout", "memory", "stdin" };
  for (size_t i = 0; i < 4; i++)
    {
      yajl_val s = csr_json_get (v, strs[i]);
      if (s && !YAJL_IS_STRING (s))
        {
          snprintf (why, why_len, "\"%s\" must be a string", strs[i]);
          return -1;
        }
    }
  double t;
  const char *ts = csr_json_str (csr_json_get (v, "timeout"));
  if (ts && csr_parse_duration (ts, 86400, &t, &e) < 0)
    {
      snprintf (why, why_len, "\"timeout\": %s", csr_error_text (e));
      csr_error_free (e);
      return -1;
    }
  *memory = base_memory;
  const char *ms = csr_json_str (csr_json_get (v, "memory"));
  if (ms && (csr_parse_size (ms, 1ULL << 40, memory, &e) < 0 || *memory < (16ULL << 20)))
    {
      snprintf (why, why_len, "\"memory\": %s", e ? csr_error_text (e) : "below 16 MiB");
      csr_error_free (e);
      return -1;
    }
  *path = manifest_path (manifest, p);
  *label = strdup (l ? l->u.string : p);
  return 0;
}

/* A TSV manifest line (PATH, then LABEL, then one argument per field; an
 * empty LABEL: the path) as the JSON object a JSONL line would be. */
static char *
tsv_to_json (const char *line)
{
  struct csr_jgen w;
  csr_error *e = NULL;
  if (csr_jgen_init (&w, false, &e) < 0)
    {
      csr_error_free (e);
      return NULL;
    }
  csr_jgen_map_open (&w);
  const char *p = line;
  for (int field = 0; p; field++)
    {
      const char *tab = strchr (p, '\t');
      size_t len = tab ? (size_t)(tab - p) : strlen (p);
      cleanup_free char *f = strndup (p, len);
      if (f == NULL)
        break;
      if (field == 0)
        csr_jgen_kv_str (&w, "path", f);
      else if (field == 1 && f[0])
        csr_jgen_kv_str (&w, "label", f);
      else if (field == 2)
        {
          csr_jgen_str (&w, "args");
          csr_jgen_array_open (&w);
        }
      if (field >= 2)
        csr_jgen_str (&w, f);
      if (tab == NULL && field >= 2)
        csr_jgen_array_close (&w);
      p = tab ? tab + 1 : NULL;
    }
  csr_jgen_map_close (&w);
  size_t n = 0;
  char *r = csr_jgen_finish (&w, "a TSV line", &n, &e);
  csr_jgen_release (&w);
  csr_error_free (e);
  if (r)
    r[strcspn (r, "\n")] = '\0';
  return r;
}

static int
read_manifest (const struct batch_opts *o, struct batch_items *items, csr_error **err)
{
  cleanup_file FILE *f = fopen (o->manifest, "re");
  if (f == NULL)
    return csr_error_set (err, errno, "cannot read --manifest '%s'", o->manifest);
  cleanup_free char *line = NULL;
  size_t cap = 0, no = 0;
  ssize_t n;
  while ((n = getline (&line, &cap, f)) >= 0)
    {
      no++;
      while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
      size_t skip = strspn (line, " \t");
      if (line[skip] == '\0' || line[skip] == '#')
        continue; /* blank lines and comments */
      char why[300] = "";
      char *path = NULL, *label = NULL;
      uint64_t memory = 0;
      cleanup_free char *json = NULL;
      if (line[skip] != '{')
        {
          /* TSV: PATH<TAB>LABEL<TAB>ARG... */
          json = tsv_to_json (line);
          if (json == NULL)
            return csr_error_set (err, ENOMEM, "out of memory");
          free (line);
          line = steal_pointer (&json);
          cap = strlen (line) + 1;
          n = (ssize_t)strlen (line);
        }
      if (parse_manifest_line (o->manifest, line, (size_t)n, o->run.req.limits.memory, &path,
                               &label, &memory, why, sizeof why)
          < 0)
        {
          if (o->skip_bad)
            {
              fprintf (stderr, "csrun batch: %s:%zu: skipped (--skip-bad): %s\n", o->manifest, no,
                       why);
              continue;
            }
          return csr_error_set (err, 0, "%s:%zu: %s (or --skip-bad)", o->manifest, no, why);
        }
      char *copy = strdup (line);
      if (path == NULL || label == NULL || copy == NULL)
        {
          free (path);
          free (label);
          free (copy);
          return csr_error_set (err, ENOMEM, "out of memory");
        }
      if (push_item (items, path, label, copy, no, memory, err) < 0)
        return -1;
    }
  if (ferror (f))
    return csr_error_set (err, errno, "cannot read --manifest '%s'", o->manifest);
  return 0;
}

static int
cmp_label (const void *a, const void *b)
{
  return strcmp (((const struct batch_item *)a)->label, ((const struct batch_item *)b)->label);
}

static int
cmp_index (const void *a, const void *b)
{
  size_t x = ((const struct batch_item *)a)->index, y = ((const struct batch_item *)b)->index;
  return x < y ? -1 : x > y;
}

static int
cmp_item_ptr (const void *a, const void *b)
{
  return strcmp ((*(struct batch_item *const *)a)->label, (*(struct batch_item *const *)b)->label);
}

struct batch_item *
batch_items_find (struct batch_items *items, const char *label)
{
  /* ITEMS stay in run order; a linear scan over at most a few thousand
   * labels per resumed line would be quadratic: a sorted index instead. */
  static struct batch_item **index;
  static size_t n_index;
  static struct batch_items *indexed;
  if (indexed != items || n_index != items->n)
    {
      free (index);
      index = malloc ((items->n + 1) * sizeof *index);
      if (index == NULL)
        return NULL;
      for (size_t i = 0; i < items->n; i++)
        index[i] = &items->v[i];
      n_index = items->n;
      indexed = items;
      qsort (index, n_index, sizeof *index, cmp_item_ptr);
    }
  size_t lo = 0, hi = n_index;
  while (lo < hi)
    {
      size_t mid = (lo + hi) / 2;
      int c = strcmp (label, index[mid]->label);
      if (c == 0)
        return index[mid];
      if (c < 0)
        hi = mid;
      else
        lo = mid + 1;
    }
  return NULL;
}

int
batch_items_collect (const struct batch_opts *o, struct batch_items *items, csr_error **err)
{
  uint64_t mem = o->run.req.limits.memory;
  for (size_t i = 0; i < o->n_paths; i++)
    {
      const char *p = o->paths[i];
      struct stat st;
      if (stat (p, &st) < 0)
        return csr_error_set (err, errno, "cannot read '%s'", p);
      if (S_ISDIR (st.st_mode))
        {
          size_t len = strlen (p);
          cleanup_free char *d = strndup (p, len > 1 && p[len - 1] == '/' ? len - 1 : len);
          if (d == NULL || walk_dir (d, items, mem, err) < 0)
            return d ? -1 : csr_error_set (err, ENOMEM, "out of memory");
        }
      else
        {
          char *path = strdup (p), *label = strdup (p);
          if (path == NULL || label == NULL)
            {
              free (path);
              free (label);
              return csr_error_set (err, ENOMEM, "out of memory");
            }
          if (push_item (items, path, label, NULL, 0, mem, err) < 0)
            return -1;
        }
    }
  if (o->manifest && read_manifest (o, items, err) < 0)
    return -1;
  if (items->n == 0)
    return csr_error_set (err, 0, "no items (no *.py file found, an empty manifest)");
  for (size_t i = 0; i < items->n; i++)
    {
      struct batch_item *it = &items->v[i];
      const char *why = csr_label_problem (it->label);
      if (why == NULL && !csr_utf8_valid (it->path, strlen (it->path)))
        why = "its path is not valid UTF-8";
      if (why)
        return csr_error_set (err, 0, "item '%s'%s: invalid label: %s", it->label,
                              it->line_no ? " (manifest line)" : "", why);
      if (o->total_memory && it->memory > o->total_memory)
        return csr_error_set (err, 0, "item '%s': --memory %llu exceeds --total-memory %llu",
                              it->label, (unsigned long long)it->memory,
                              (unsigned long long)o->total_memory);
    }
  /* Duplicate labels, and the shard: over the list sorted by label, item K
   * belongs to shard K mod N (deterministic whatever the order given). */
  qsort (items->v, items->n, sizeof *items->v, cmp_label);
  for (size_t i = 1; i < items->n; i++)
    if (strcmp (items->v[i - 1].label, items->v[i].label) == 0)
      return csr_error_set (err, 0, "duplicate label '%s'%s (labels name results and outputs)",
                            items->v[i].label,
                            items->v[i].line_no ? " in the manifest" : " (the same file twice?)");
  if (o->shard_n > 0)
    {
      size_t kept = 0;
      for (size_t i = 0; i < items->n; i++)
        {
          if (i % o->shard_n == o->shard_i)
            items->v[kept++] = items->v[i];
          else
            {
              free (items->v[i].path);
              free (items->v[i].label);
              free (items->v[i].line);
            }
        }
      items->n = kept;
    }
  qsort (items->v, items->n, sizeof *items->v, cmp_index); /* back to the order given */
  for (size_t i = 0; i < items->n; i++)
    batch_item_options_digest (&o->run, &items->v[i]);
  return 0;
}

void
batch_items_release (struct batch_items *items)
{
  for (size_t i = 0; i < items->n; i++)
    {
      free (items->v[i].path);
      free (items->v[i].label);
      free (items->v[i].line);
    }
  free (items->v);
  items->v = NULL;
  items->n = items->cap = 0;
}

char *
batch_out_name (const char *label)
{
  /* OUTDIR/<label>: '/' kept (subdirectories), anything but [A-Za-z0-9._-]
   * becomes '_', "." and ".." components and a leading '/' can't escape. */
  size_t n = strlen (label);
  char *r = malloc (n + 2);
  if (r == NULL)
    return NULL;
  size_t j = 0;
  for (size_t i = 0; i < n; i++)
    {
      char c = label[i];
      if (c == '/')
        {
          if (j == 0 || r[j - 1] == '/')
            continue;
          r[j++] = '/';
          continue;
        }
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '.' || c == '_' || c == '-';
      /* a component that is only dots */
      if (c == '.' && (j == 0 || r[j - 1] == '/'))
        {
          size_t k = i;
          while (k < n && label[k] == '.')
            k++;
          if (k == n || label[k] == '/')
            ok = false;
        }
      r[j++] = ok ? c : '_';
    }
  while (j > 0 && r[j - 1] == '/')
    j--;
  if (j == 0)
    r[j++] = '_';
  r[j] = '\0';
  return r;
}

/* Everything in the request that can change an item's result. */
void
batch_item_options_digest (const struct run_opts *o, struct batch_item *it)
{
  const struct csr_snippet_request *r = &o->req;
  struct csr_sha256 s;
  csr_sha256_init (&s);
  char buf[512];
  int n = snprintf (buf, sizeof buf,
                    "v1 t=%.3f mem=%llu pids=%llu cpu=%llu out=%llu tmp=%llu att=%d noheal=%d "
                    "nosilent=%d net=%d user=%u:%u code=%llu",
                    r->timeout_s, (unsigned long long)r->limits.memory,
                    (unsigned long long)r->limits.pids, (unsigned long long)r->limits.cpu_millis,
                    (unsigned long long)r->max_output, (unsigned long long)r->tmp_size,
                    r->max_attempts, r->no_heal, r->no_silent_scan, r->host_net, r->user_uid,
                    r->user_gid, (unsigned long long)r->max_code);
  csr_sha256_update (&s, buf, (size_t)n);
  const char *strs[] = { r->gate_conf, r->heal_conf, r->silent_conf, r->seccomp, r->rootfs,
                         r->patch_cmd, r->out_dir,   o->stdin_file,  o->llm.llm, o->llm.base_url };
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
    {
      csr_sha256_update (&s, "\n", 1);
      if (strs[i])
        csr_sha256_update (&s, strs[i], strlen (strs[i]) + 1);
    }
  for (size_t i = 0; i < r->n_allow; i++)
    csr_sha256_update (&s, r->allow[i], strlen (r->allow[i]) + 1);
  csr_sha256_update (&s, "\nsp", 3);
  for (size_t i = 0; i < r->n_silent_patterns; i++)
    csr_sha256_update (&s, r->silent_patterns[i], strlen (r->silent_patterns[i]) + 1);
  csr_sha256_update (&s, "\nenv", 4);
  for (size_t i = 0; i < r->n_env; i++)
    csr_sha256_update (&s, r->env[i], strlen (r->env[i]) + 1);
  csr_sha256_update (&s, "\nin", 3);
  for (size_t i = 0; i < r->n_inputs; i++)
    {
      csr_sha256_update (&s, r->inputs[i].src, strlen (r->inputs[i].src) + 1);
      csr_sha256_update (&s, r->inputs[i].dest, strlen (r->inputs[i].dest) + 1);
    }
  csr_sha256_update (&s, "\nargs", 5);
  for (int i = 0; i < r->n_args; i++)
    csr_sha256_update (&s, r->args[i], strlen (r->args[i]) + 1);
  csr_sha256_update (&s, "\nitem", 5);
  csr_sha256_update (&s, it->path, strlen (it->path) + 1);
  if (it->line)
    csr_sha256_update (&s, it->line, strlen (it->line));
  if (csr_sha256_final (&s, it->options_sha256) < 0)
    it->options_sha256[0] = '\0';
}
