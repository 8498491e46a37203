/* csrun — the one JSON generator wrapper (json-gen.h). */

#include "config.h"
#include "json-gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "utf8.h"

int
csr_jgen_init (struct csr_jgen *w, bool pretty, csr_error **err)
{
  memset (w, 0, sizeof *w);
  w->st = yajl_gen_status_ok;
  w->g = yajl_gen_alloc (NULL);
  if (w->g == NULL)
    return csr_error_set (err, ENOMEM, "cannot allocate a JSON generator");
  if (pretty)
    {
      yajl_gen_config (w->g, yajl_gen_beautify, 1);
      yajl_gen_config (w->g, yajl_gen_indent_string, "  ");
    }
  return 0;
}

bool
csr_jgen_ok (const struct csr_jgen *w)
{
  return w->st == yajl_gen_status_ok && !w->oom;
}

static void
check (struct csr_jgen *w, yajl_gen_status st)
{
  if (w->st == yajl_gen_status_ok)
    w->st = st;
}

void
csr_jgen_map_open (struct csr_jgen *w)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_map_open (w->g));
}

void
csr_jgen_map_close (struct csr_jgen *w)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_map_close (w->g));
}

void
csr_jgen_array_open (struct csr_jgen *w)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_array_open (w->g));
}

void
csr_jgen_array_close (struct csr_jgen *w)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_array_close (w->g));
}

void
csr_jgen_str (struct csr_jgen *w, const char *s)
{
  if (!csr_jgen_ok (w))
    return;
  if (s == NULL)
    s = "";
  size_t len = strlen (s);
  if (csr_utf8_valid (s, len))
    {
      check (w, yajl_gen_string (w->g, (const unsigned char *)s, len));
      return;
    }
  size_t n = 0;
  cleanup_free char *fixed = csr_utf8_sanitize (s, len, &n);
  if (fixed == NULL)
    {
      w->oom = true;
      return;
    }
  check (w, yajl_gen_string (w->g, (const unsigned char *)fixed, n));
}

void
csr_jgen_int (struct csr_jgen *w, long long v)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_integer (w->g, v));
}

void
csr_jgen_bool (struct csr_jgen *w, bool v)
{
  if (csr_jgen_ok (w))
    check (w, yajl_gen_bool (w->g, v));
}

void
csr_jgen_double (struct csr_jgen *w, double v)
{
  if (!csr_jgen_ok (w))
    return;
  char buf[64];
  if (!(v == v) || v > 1e15 || v < -1e15)
    v = 0;
  snprintf (buf, sizeof buf, "%.3f", v);
  /* "60.000" -> "60.0", "0.100" -> "0.1" */
  size_t n = strlen (buf);
  while (n > 1 && buf[n - 1] == '0' && buf[n - 2] != '.')
    buf[--n] = '\0';
  check (w, yajl_gen_number (w->g, buf, n));
}

void
csr_jgen_kv_str (struct csr_jgen *w, const char *key, const char *value)
{
  csr_jgen_str (w, key);
  csr_jgen_str (w, value);
}

void
csr_jgen_kv_int (struct csr_jgen *w, const char *key, long long v)
{
  csr_jgen_str (w, key);
  csr_jgen_int (w, v);
}

void
csr_jgen_kv_strv (struct csr_jgen *w, const char *key, const char *const *v)
{
  csr_jgen_str (w, key);
  csr_jgen_array_open (w);
  for (; *v; v++)
    csr_jgen_str (w, *v);
  csr_jgen_array_close (w);
}

void
csr_jgen_tree (struct csr_jgen *w, yajl_val v)
{
  if (!csr_jgen_ok (w))
    return;
  switch (v->type)
    {
    case yajl_t_string:
      csr_jgen_str (w, v->u.string);
      return;
    case yajl_t_number:
      check (w, yajl_gen_number (w->g, v->u.number.r, strlen (v->u.number.r)));
      return;
    case yajl_t_true:
    case yajl_t_false:
      csr_jgen_bool (w, v->type == yajl_t_true);
      return;
    case yajl_t_null:
      check (w, yajl_gen_null (w->g));
      return;
    case yajl_t_object:
      csr_jgen_map_open (w);
      for (size_t i = 0; csr_jgen_ok (w) && i < v->u.object.len; i++)
        {
          csr_jgen_str (w, v->u.object.keys[i]);
          csr_jgen_tree (w, v->u.object.values[i]);
        }
      csr_jgen_map_close (w);
      return;
    case yajl_t_array:
      csr_jgen_array_open (w);
      for (size_t i = 0; csr_jgen_ok (w) && i < v->u.array.len; i++)
        csr_jgen_tree (w, v->u.array.values[i]);
      csr_jgen_array_close (w);
      return;
    default:
      check (w, yajl_gen_invalid_string);
      return;
    }
}

char *
csr_jgen_finish (struct csr_jgen *w, const char *what, size_t *len, csr_error **err)
{
  char *out = NULL;
  const unsigned char *buf = NULL;
  size_t n = 0;

  if (w->oom)
    csr_error_set (err, ENOMEM, "out of memory building %s", what);
  else if (w->st != yajl_gen_status_ok)
    csr_error_set (err, 0, "cannot build %s (yajl_gen status %d)", what, (int)w->st);
  else if (yajl_gen_get_buf (w->g, &buf, &n) != yajl_gen_status_ok)
    csr_error_set (err, 0, "cannot build %s: the JSON is incomplete", what);
  else if ((out = strndup ((const char *)buf, n)) == NULL)
    csr_error_set (err, ENOMEM, "out of memory building %s", what);
  if (out && len)
    *len = n;
  csr_jgen_release (w);
  return out;
}

void
csr_jgen_release (struct csr_jgen *w)
{
  if (w->g)
    yajl_gen_free (w->g);
  w->g = NULL;
}
