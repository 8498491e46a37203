/* csrun — reading JSON trees: lookups, the pre-scan, the duplicate-key
 * check and the typed getters with a path (json.h).  They were config.c's
 * (config.json, the messages its tests assert) and are now what every
 * strict reader of a JSON document calls. */

#include "config.h"
#include "json.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* ------------------------------------------------------------ lookups */

yajl_val
csr_json_get (yajl_val obj, const char *key)
{
  if (obj == NULL || !YAJL_IS_OBJECT (obj))
    return NULL;
  for (size_t i = 0; i < obj->u.object.len; i++)
    if (strcmp (obj->u.object.keys[i], key) == 0)
      return obj->u.object.values[i];
  return NULL;
}

yajl_val
csr_json_at (yajl_val arr, size_t i)
{
  if (arr == NULL || !YAJL_IS_ARRAY (arr) || i >= arr->u.array.len)
    return NULL;
  return arr->u.array.values[i];
}

const char *
csr_json_str (yajl_val v)
{
  return v != NULL && YAJL_IS_STRING (v) ? v->u.string : NULL;
}

long long
csr_json_int (yajl_val obj, const char *key, long long dflt)
{
  yajl_val v = csr_json_get (obj, key);
  return v && YAJL_IS_INTEGER (v) ? YAJL_GET_INTEGER (v) : dflt;
}

uint64_t
csr_json_u64 (yajl_val obj, const char *key)
{
  long long v = csr_json_int (obj, key, 0);
  return v > 0 ? (uint64_t)v : 0;
}

void
csr_json_freep (yajl_val *v)
{
  if (*v)
    yajl_tree_free (*v);
  *v = NULL;
}

/* ------------------------------------------------------------ getters with a path */

static const char *
doc_name (const struct csr_jpath *x)
{
  return x->what ? x->what : "JSON document";
}

size_t
csr_jpath_push_key (struct csr_jpath *x, const char *key)
{
  size_t saved = x->len;
  size_t room = sizeof x->path - x->len;
  int n = snprintf (x->path + x->len, room, "%s%s", x->len ? "." : "", key);
  if (n > 0)
    x->len += (size_t)n < room ? (size_t)n : room - 1;
  return saved;
}

size_t
csr_jpath_push_index (struct csr_jpath *x, size_t i)
{
  size_t saved = x->len;
  size_t room = sizeof x->path - x->len;
  int n = snprintf (x->path + x->len, room, "[%zu]", i);
  if (n > 0)
    x->len += (size_t)n < room ? (size_t)n : room - 1;
  return saved;
}

void
csr_jpath_pop (struct csr_jpath *x, size_t saved)
{
  x->len = saved;
  x->path[saved] = '\0';
}

/* S with control characters written as C escapes: keys and values quoted in
 * a message come from the document, and the message must stay one line. */
static char *
escape_controls (const char *s)
{
  char *out = malloc (strlen (s) * 4 + 1);
  if (out == NULL)
    return NULL;
  char *o = out;
  for (; *s; s++)
    {
      unsigned char ch = (unsigned char)*s;
      if (ch == '\n')
        o = stpcpy (o, "\\n");
      else if (ch == '\t')
        o = stpcpy (o, "\\t");
      else if (ch < 0x20 || ch == 0x7f)
        o += sprintf (o, "\\x%02x", ch);
      else
        *o++ = (char)ch;
    }
  *o = '\0';
  return out;
}

int
csr_jpath_fail (struct csr_jpath *x, const char *fmt, ...)
{
  va_list ap;
  char *msg = NULL;
  va_start (ap, fmt);
  int r = vasprintf (&msg, fmt, ap);
  va_end (ap);
  if (r < 0)
    return csr_error_set (x->err, ENOMEM, "%s", doc_name (x));
  char *full = NULL;
  if (x->len == 0)
    full = steal_pointer (&msg);
  else if (asprintf (&full, "%s: %s", x->path, msg) < 0)
    full = NULL;
  free (msg);
  if (full == NULL)
    return csr_error_set (x->err, ENOMEM, "%s", doc_name (x));
  char *clean = escape_controls (full);
  free (full);
  if (clean == NULL)
    return csr_error_set (x->err, ENOMEM, "%s", doc_name (x));
  csr_error_set (x->err, 0, "%s", clean);
  free (clean);
  return -1;
}

int
csr_jpath_oom (struct csr_jpath *x)
{
  return csr_error_set (x->err, ENOMEM, "%s", x->len ? x->path : doc_name (x));
}

const char *
csr_json_type_name (yajl_val v)
{
  switch (v->type)
    {
    case yajl_t_string:
      return "a string";
    case yajl_t_number:
      return "a number";
    case yajl_t_object:
      return "an object";
    case yajl_t_array:
      return "an array";
    case yajl_t_true:
    case yajl_t_false:
      return "a boolean";
    case yajl_t_null:
      return "null";
    default:
      return "an unknown value";
    }
}

int
csr_jpath_expect (struct csr_jpath *x, yajl_val v, yajl_type t, const char *what)
{
  if (v->type == t || (t == yajl_t_true && v->type == yajl_t_false))
    return 0;
  return csr_jpath_fail (x, "expected %s, got %s", what, csr_json_type_name (v));
}

/* Whether the number's text is a plain integer: optional '-' and digits. */
static bool
number_is_integral (const char *r)
{
  if (*r == '-')
    r++;
  if (*r == '\0')
    return false;
  for (; *r; r++)
    if (!isdigit ((unsigned char)*r))
      return false;
  return true;
}

/* An unsigned integer in [0, MAX].  Parsed from the number's text so that
 * values above INT64_MAX (rlimits of 2^64-1) are read exactly. */
int
csr_jpath_u64 (struct csr_jpath *x, yajl_val v, uint64_t max, uint64_t *out)
{
  if (v->type != yajl_t_number)
    return csr_jpath_fail (x, "expected an unsigned integer, got %s", csr_json_type_name (v));
  const char *r = YAJL_GET_NUMBER (v);
  if (!number_is_integral (r) || r[0] == '-')
    return csr_jpath_fail (x, "expected an unsigned integer, got %s", r);
  errno = 0;
  unsigned long long n = strtoull (r, NULL, 10);
  if (errno == ERANGE || n > max)
    return csr_jpath_fail (x, "%s is out of range (0 to %" PRIu64 ")", r, max);
  *out = n;
  return 0;
}

int
csr_jpath_u32 (struct csr_jpath *x, yajl_val v, uint64_t max, uint32_t *out)
{
  uint64_t n;
  if (csr_jpath_u64 (x, v, max, &n) < 0)
    return -1;
  *out = (uint32_t)n;
  return 0;
}

/* A signed integer in [MIN, MAX] (yajl's own 64-bit conversion). */
int
csr_jpath_i64 (struct csr_jpath *x, yajl_val v, int64_t min, int64_t max, int64_t *out)
{
  if (v->type != yajl_t_number)
    return csr_jpath_fail (x, "expected an integer, got %s", csr_json_type_name (v));
  const char *r = YAJL_GET_NUMBER (v);
  if (!number_is_integral (r))
    return csr_jpath_fail (x, "expected an integer, got %s", r);
  if (!YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < min || YAJL_GET_INTEGER (v) > max)
    return csr_jpath_fail (x, "%s is out of range (%" PRId64 " to %" PRId64 ")", r, min, max);
  *out = YAJL_GET_INTEGER (v);
  return 0;
}

int
csr_jpath_string (struct csr_jpath *x, yajl_val v, char **out)
{
  if (v->type != yajl_t_string)
    return csr_jpath_fail (x, "expected a string, got %s", csr_json_type_name (v));
  char *s = strdup (v->u.string);
  if (s == NULL)
    return csr_jpath_oom (x);
  free (*out);
  *out = s;
  return 0;
}

/* Look KEY up in OBJ.  Absent (or null when optional): *OUT = NULL, returns 0
 * (or an error when REQUIRED).  Present: pushes KEY onto the path (the caller
 * pops to *SAVED) and returns 1. */
int
csr_jpath_field (struct csr_jpath *x, yajl_val obj, const char *key, bool required, yajl_val *out,
                 size_t *saved)
{
  yajl_val v = csr_json_get (obj, key);
  *out = NULL;
  if (v == NULL || (v->type == yajl_t_null && !required))
    {
      if (!required)
        return 0;
      size_t s = csr_jpath_push_key (x, key);
      csr_jpath_fail (x, "required field is missing");
      csr_jpath_pop (x, s);
      return -1;
    }
  *saved = csr_jpath_push_key (x, key);
  *out = v;
  return 1;
}

int
csr_jpath_get_string (struct csr_jpath *x, yajl_val obj, const char *key, bool required, char **out)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = csr_jpath_string (x, v, out);
  csr_jpath_pop (x, s);
  return r;
}

int
csr_jpath_get_bool (struct csr_jpath *x, yajl_val obj, const char *key, bool *out)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_field (x, obj, key, false, &v, &s);
  if (r <= 0)
    return r;
  r = csr_jpath_expect (x, v, yajl_t_true, "a boolean");
  if (r == 0)
    *out = v->type == yajl_t_true;
  csr_jpath_pop (x, s);
  return r;
}

int
csr_jpath_get_u64 (struct csr_jpath *x, yajl_val obj, const char *key, bool required, uint64_t max,
                   uint64_t *out, bool *present)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = csr_jpath_u64 (x, v, max, out);
  if (r == 0 && present)
    *present = true;
  csr_jpath_pop (x, s);
  return r;
}

int
csr_jpath_get_u32 (struct csr_jpath *x, yajl_val obj, const char *key, bool required, uint64_t max,
                   uint32_t *out, bool *present)
{
  uint64_t n;
  bool have = false;
  if (csr_jpath_get_u64 (x, obj, key, required, max, &n, &have) < 0)
    return -1;
  if (have)
    {
      *out = (uint32_t)n;
      if (present)
        *present = true;
    }
  return 0;
}

int
csr_jpath_get_i64 (struct csr_jpath *x, yajl_val obj, const char *key, bool required, int64_t min,
                   int64_t max, int64_t *out, bool *present)
{
  yajl_val v;
  size_t s;
  int r = csr_jpath_field (x, obj, key, required, &v, &s);
  if (r <= 0)
    return r;
  r = csr_jpath_i64 (x, v, min, max, out);
  if (r == 0 && present)
    *present = true;
  csr_jpath_pop (x, s);
  return r;
}

/* OBJ[KEY] must be of type T when present; *OUT NULL when absent.  The path
 * is left at KEY (pop to *SAVED) when *OUT is set. */
int
csr_jpath_get_typed (struct csr_jpath *x, yajl_val obj, const char *key, bool required, yajl_type t,
                     const char *what, yajl_val *out, size_t *saved)
{
  int r = csr_jpath_field (x, obj, key, required, out, saved);
  if (r <= 0)
    return r;
  if (csr_jpath_expect (x, *out, t, what) < 0)
    {
      *out = NULL;
      csr_jpath_pop (x, *saved);
      return -1;
    }
  return 1;
}

int
csr_jpath_array_object (struct csr_jpath *x, yajl_val v, size_t i, yajl_val *out, size_t *saved)
{
  *saved = csr_jpath_push_index (x, i);
  *out = v->u.array.values[i];
  if (csr_jpath_expect (x, *out, yajl_t_object, "an object") < 0)
    {
      csr_jpath_pop (x, *saved);
      return -1;
    }
  return 0;
}

/* What yajl_tree_parse would let through or choke on: NUL bytes (the copy is a
 * C string), comments (yajl_tree_parse enables them), "\u0000" (truncates the
 * C string silently), and nesting deep enough to exhaust the stack when the
 * tree is freed. */
int
csr_json_prescan (const char *s, size_t len, csr_error **err)
{
  return csr_json_prescan_opt (s, len, false, err);
}

int
csr_json_prescan_opt (const char *s, size_t len, bool nul_escapes, csr_error **err)
{
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < len; i++)
    {
      char ch = s[i];
      if (ch == '\0')
        return csr_error_set (err, 0, "invalid JSON: NUL byte at offset %zu", i);
      if (in_string)
        {
          if (ch == '"')
            in_string = false;
          else if (ch == '\\' && i + 1 < len)
            {
              if (!nul_escapes && s[i + 1] == 'u' && len - i >= 6
                  && memcmp (s + i + 2, "0000", 4) == 0)
                return csr_error_set (
                    err, 0, "invalid JSON: string with a \\u0000 escape at offset %zu", i);
              i++;
            }
          continue;
        }
      switch (ch)
        {
        case '"':
          in_string = true;
          break;
        case '[':
        case '{':
          if (++depth > CSR_JSON_MAX_DEPTH)
            return csr_error_set (err, 0,
                                  "invalid JSON: nested deeper than %d levels at offset %zu",
                                  CSR_JSON_MAX_DEPTH, i);
          break;
        case ']':
        case '}':
          if (depth)
            depth--;
          break;
        case '/':
          return csr_error_set (err, 0, "invalid JSON: comment at offset %zu", i);
        default:
          break;
        }
    }
  return 0;
}

static int
strcmp_p (const void *a, const void *b)
{
  return strcmp (*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate keys mean different things to different parsers (yajl_tree
 * keeps the first, Go's encoding/json the last): refuse them everywhere. */
int
csr_jpath_check_duplicates (struct csr_jpath *x, yajl_val v)
{
  if (v->type == yajl_t_array)
    {
      for (size_t i = 0; i < v->u.array.len; i++)
        {
          size_t s = csr_jpath_push_index (x, i);
          if (csr_jpath_check_duplicates (x, v->u.array.values[i]) < 0)
            return -1;
          csr_jpath_pop (x, s);
        }
      return 0;
    }
  if (v->type != yajl_t_object)
    return 0;
  size_t n = v->u.object.len;
  if (n > 1)
    {
      const char *dup = NULL;
      if (n <= 16)
        {
          for (size_t i = 1; i < n && !dup; i++)
            for (size_t j = 0; j < i && !dup; j++)
              if (strcmp (v->u.object.keys[i], v->u.object.keys[j]) == 0)
                dup = v->u.object.keys[i];
        }
      else
        {
          cleanup_free const char **keys = malloc (n * sizeof *keys);
          if (keys == NULL)
            return csr_jpath_oom (x);
          memcpy (keys, v->u.object.keys, n * sizeof *keys);
          qsort (keys, n, sizeof *keys, strcmp_p);
          for (size_t i = 1; i < n && !dup; i++)
            if (strcmp (keys[i], keys[i - 1]) == 0)
              dup = keys[i];
        }
      if (dup)
        return csr_jpath_fail (x, "duplicate key '%s'", dup);
    }
  for (size_t i = 0; i < n; i++)
    {
      size_t s = csr_jpath_push_key (x, v->u.object.keys[i]);
      if (csr_jpath_check_duplicates (x, v->u.object.values[i]) < 0)
        return -1;
      csr_jpath_pop (x, s);
    }
  return 0;
}
