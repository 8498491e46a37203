/* csrun — .env files: KEY=VALUE lines for the LLM settings (API keys, the
 * provider, the model), read by --env-file.
 *
 *   # a comment
 *   export OPENAI_API_KEY=sk-...        "export " is optional
 *   CSRUN_LLM = anthropic               blanks around '=' are allowed
 *   A='literal $text'                   single quotes: as is
 *   B="tab\there\nnewline \"q\" \\"     double quotes: \n \t \\ \" escapes
 *   C=bare value  # dropped             bare: trailing blanks and " #..." dropped
 *
 * Quoted values end on their line.  Errors name the line, never its text
 * (it may hold a secret). */
#include "config.h"
#include "llm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

#define ENVFILE_MAX ((size_t)1024 * 1024)

static bool
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

static bool
is_name_start (char c)
{
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool
is_name_char (char c)
{
  return is_name_start (c) || (c >= '0' && c <= '9');
}

static int
envfile_add (struct csr_envfile *e, const char *key, size_t key_len, char *value, csr_error **err)
{
  char **k = realloc (e->keys, (e->n + 1) * sizeof *k);
  if (k == NULL)
    return csr_error_errno (err, "cannot allocate");
  e->keys = k;
  char **v = realloc (e->values, (e->n + 1) * sizeof *v);
  if (v == NULL)
    return csr_error_errno (err, "cannot allocate");
  e->values = v;
  char *kc = strndup (key, key_len);
  if (kc == NULL)
    return csr_error_errno (err, "cannot allocate");
  e->keys[e->n] = kc;
  e->values[e->n] = value;
  e->n++;
  return 0;
}

/* After a closing quote: blanks, then nothing or a comment. */
static bool
only_comment_left (const char *p, const char *end)
{
  while (p < end && is_blank (*p))
    p++;
  return p == end || *p == '#';
}

/* Parse the value in [RAW, END) (the rest of the line after '=').  Returns
 * a new string, or NULL with *WHAT set to the problem (or NULL: no memory). */
static char *
parse_value (const char *raw, const char *end, const char **what)
{
  const char *p = raw;
  *what = NULL;
  while (p < end && is_blank (*p))
    p++;
  if (p < end && *p == '\'')
    {
      const char *close = memchr (p + 1, '\'', (size_t)(end - p - 1));
      if (close == NULL)
        {
          *what = "unterminated '...' value";
          return NULL;
        }
      if (!only_comment_left (close + 1, end))
        {
          *what = "unexpected text after the closing quote";
          return NULL;
        }
      return strndup (p + 1, (size_t)(close - p - 1));
    }
  if (p < end && *p == '"')
    {
      char *out = malloc ((size_t)(end - p));
      if (out == NULL)
        return NULL;
      size_t n = 0;
      const char *q = p + 1;
      for (;; q++)
        {
          if (q >= end)
            {
              free (out);
              *what = "unterminated \"...\" value";
              return NULL;
            }
          if (*q == '"')
            break;
          if (*q == '\\' && q + 1 < end)
            {
              q++;
              switch (*q)
                {
                case 'n':
                  out[n++] = '\n';
                  break;
                case 't':
                  out[n++] = '\t';
                  break;
                case '\\':
                case '"':
                  out[n++] = *q;
                  break;
                default:
                  /* Not an escape we know: keep both characters. */
                  out[n++] = '\\';
                  out[n++] = *q;
                  break;
                }
              continue;
            }
          out[n++] = *q;
        }
      if (!only_comment_left (q + 1, end))
        {
          free (out);
          *what = "unexpected text after the closing quote";
          return NULL;
        }
      out[n] = '\0';
      return out;
    }
  /* Bare: up to a '#' that follows a blank ("A=x#y" keeps "x#y", "A= #y" is
   * empty), then trailing blanks dropped. */
  const char *v = p, *stop = end;
  for (const char *q = v; q < end; q++)
    if (*q == '#' && q > raw && is_blank (q[-1]))
      {
        stop = q;
        break;
      }
  while (stop > v && is_blank (stop[-1]))
    stop--;
  return strndup (v, (size_t)(stop - v));
}

int
csr_envfile_parse (const char *text, size_t len, struct csr_envfile *e, csr_error **err)
{
  memset (e, 0, sizeof *e);
  const char *p = text, *end = text + len;
  if (len > 0 && memchr (text, '\0', len) != NULL)
    {
      /* Report the line of the first NUL. */
      const char *z = memchr (text, '\0', len);
      size_t line = 1;
      for (const char *q = text; q < z; q++)
        line += *q == '\n';
      return csr_error_set (err, 0, "line %zu: NUL byte", line);
    }
  /* A UTF-8 byte order mark is not part of the first key. */
  if (len >= 3 && memcmp (p, "\xef\xbb\xbf", 3) == 0)
    p += 3;
  for (size_t line = 1; p < end; line++)
    {
      const char *eol = memchr (p, '\n', (size_t)(end - p));
      const char *next = eol ? eol + 1 : end;
      if (eol == NULL)
        eol = end;
      if (eol > p && eol[-1] == '\r')
        eol--;
      const char *q = p;
      p = next;
      while (q < eol && is_blank (*q))
        q++;
      if (q == eol || *q == '#')
        continue;
      if (eol - q > 7 && memcmp (q, "export", 6) == 0 && is_blank (q[6]))
        {
          q += 7;
          while (q < eol && is_blank (*q))
            q++;
        }
      const char *key = q;
      while (q < eol && is_name_char (*q))
        q++;
      size_t key_len = (size_t)(q - key);
      while (q < eol && is_blank (*q))
        q++;
      if (q == eol || *q != '=')
        {
          csr_envfile_release (e);
          if (key_len > 0 && q < eol && *q != '=' && !is_blank (q[-1]))
            return csr_error_set (err, 0, "line %zu: invalid variable name", line);
          return csr_error_set (err, 0, "line %zu: expected KEY=VALUE", line);
        }
      if (key_len == 0)
        {
          csr_envfile_release (e);
          return csr_error_set (err, 0, "line %zu: expected KEY=VALUE", line);
        }
      if (!is_name_start (key[0]))
        {
          csr_envfile_release (e);
          return csr_error_set (err, 0, "line %zu: invalid variable name", line);
        }
      const char *what = NULL;
      char *value = parse_value (q + 1, eol, &what);
      if (value == NULL)
        {
          csr_envfile_release (e);
          if (what)
            return csr_error_set (err, 0, "line %zu: %s", line, what);
          return csr_error_errno (err, "line %zu: cannot allocate", line);
        }
      if (envfile_add (e, key, key_len, value, err) < 0)
        {
          free (value);
          csr_envfile_release (e);
          return -1;
        }
    }
  return 0;
}

int
csr_envfile_load (const char *path, struct csr_envfile *e, csr_error **err)
{
  memset (e, 0, sizeof *e);
  /* Not csr_read_file: a FIFO is welcome here ("--env-file <(pass show
   * llm)" keeps the key off the disk). */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return csr_error_errno (err, "%s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "%s", path);
  if (S_ISDIR (st.st_mode))
    return csr_error_set (err, EISDIR, "%s", path);
  cleanup_free char *text = NULL;
  size_t len = 0;
  csr_error *rerr = NULL;
  if (csr_read_fd (fd, ENVFILE_MAX, &text, &len, &rerr) < 0)
    {
      int status = rerr ? rerr->status : 0;
      csr_error_free (rerr);
      if (status == EFBIG)
        return csr_error_set (err, 0, "%s: larger than 1 MiB", path);
      return csr_error_set (err, status, "%s", path);
    }
  csr_error *perr = NULL;
  if (csr_envfile_parse (text, len, e, &perr) < 0)
    {
      /* The message is complete: no strerror appended. */
      csr_error_set (err, 0, "%s: %s", path, perr && perr->msg ? perr->msg : "cannot parse");
      csr_error_free (perr);
      return -1;
    }
  return 0;
}

const char *
csr_envfile_get (const struct csr_envfile *e, const char *key)
{
  if (e == NULL || key == NULL)
    return NULL;
  for (size_t i = e->n; i-- > 0;)
    if (strcmp (e->keys[i], key) == 0)
      return e->values[i];
  return NULL;
}

void
csr_envfile_release (struct csr_envfile *e)
{
  if (e == NULL)
    return;
  for (size_t i = 0; i < e->n; i++)
    {
      free (e->keys[i]);
      free (e->values[i]);
    }
  free (e->keys);
  free (e->values);
  memset (e, 0, sizeof *e);
}
