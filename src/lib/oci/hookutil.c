#include "config.h"
#include "hookutil.h"

#include <string.h>

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash ? slash + 1 : path;
}

static bool
ends_with (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

bool
csr_hook_is_python (const char *argv0)
{
  if (argv0 == NULL)
    return false;
  const char *b = base_name (argv0);
  if (strcmp (b, "python") == 0 || strcmp (b, "python3") == 0)
    return true;
  if (strncmp (b, "python3.", 8) != 0 || b[8] == '\0')
    return false;
  for (const char *p = b + 8; *p; p++)
    if (*p < '0' || *p > '9')
      return false;
  return true;
}

/* Skip env(1) and what it takes before the command: the index of the
 * command, or N when there is none or env is given an option we don't follow
 * (-C DIR would change what a relative script path means, -S splits a string). */
static size_t
skip_env (char *const *args, size_t n)
{
  size_t i = 1;
  while (i < n && args[i])
    {
      const char *a = args[i];
      if (strcmp (a, "--") == 0)
        return i + 1;
      if (strcmp (a, "-") == 0 || strcmp (a, "-i") == 0 || strcmp (a, "--ignore-environment") == 0
          || strcmp (a, "-0") == 0 || strcmp (a, "--null") == 0)
        i++;
      else if (strcmp (a, "-u") == 0 || strcmp (a, "--unset") == 0)
        i += 2;
      else if ((strncmp (a, "-u", 2) == 0 && a[2] != '\0') || strncmp (a, "--unset=", 8) == 0)
        i++;
      else if (a[0] == '-')
        return n;
      else if (strchr (a, '=') != NULL)
        i++;
      else
        return i;
    }
  return n;
}

void
csr_hook_find_program (char *const *args, size_t n, struct csr_hook_prog *out)
{
  *out = (struct csr_hook_prog){ .kind = CSR_HOOK_PROG_NONE };
  if (args == NULL || n == 0 || args[0] == NULL)
    return;
  /* A NULL before N ends the list (process.args is NULL-terminated too). */
  for (size_t k = 0; k < n; k++)
    if (args[k] == NULL)
      {
        n = k;
        break;
      }
  size_t i = 0;
  if (strcmp (base_name (args[0]), "env") == 0)
    {
      i = skip_env (args, n);
      if (i >= n)
        return;
    }
  if (!csr_hook_is_python (args[i]))
    {
      if (ends_with (args[i], ".py") && strcmp (base_name (args[i]), ".py") != 0)
        *out = (struct csr_hook_prog){
          .kind = CSR_HOOK_PROG_FILE, .value = args[i], .index = i, .executable = true
        };
      return;
    }
  /* CPython's command line (Python/getopt.c): short options group ("-uB");
   * c, m, W and X take an argument, the rest of the group or the next one. */
  for (i++; i < n; i++)
    {
      const char *a = args[i];
      if (strcmp (a, "--") == 0)
        {
          i++;
          break;
        }
      if (a[0] != '-' || a[1] == '\0')
        break;
      if (a[1] == '-')
        {
          if (strcmp (a, "--check-hash-based-pycs") == 0 && ++i >= n)
            return;
          continue;
        }
      for (const char *p = a + 1; *p; p++)
        {
          if (*p == 'c' || *p == 'm')
            {
              const char *v = p[1] != '\0' ? p + 1 : (i + 1 < n ? args[++i] : NULL);
              if (v == NULL)
                return;
              *out = (struct csr_hook_prog){
                .kind = *p == 'c' ? CSR_HOOK_PROG_INLINE : CSR_HOOK_PROG_MODULE,
                .value = v,
                .index = i,
              };
              return;
            }
          if (*p == 'W' || *p == 'X')
            {
              if (p[1] == '\0' && ++i >= n)
                return;
              break;
            }
        }
    }
  if (i >= n || strcmp (args[i], "-") == 0)
    {
      out->kind = CSR_HOOK_PROG_STDIN;
      return;
    }
  *out = (struct csr_hook_prog){ .kind = CSR_HOOK_PROG_FILE, .value = args[i], .index = i };
}

/* One k8s-file record in LINE[0..LEN) (no newline): its text and whether it
 * is a partial line.  False when LINE does not look like a record. */
static bool
parse_record (const char *line, size_t len, size_t *text_off, bool *partial)
{
  /* TIMESTAMP: RFC 3339 ("2024-05-01T10:00:00.123456789+00:00"), no spaces. */
  if (len < 5)
    return false;
  for (size_t k = 0; k < 4; k++)
    if (line[k] < '0' || line[k] > '9')
      return false;
  if (line[4] != '-')
    return false;
  const char *sp = memchr (line, ' ', len);
  if (sp == NULL)
    return false;
  size_t i = (size_t)(sp - line) + 1;
  /* STREAM */
  if (len - i < 7 || (memcmp (line + i, "stdout ", 7) != 0 && memcmp (line + i, "stderr ", 7) != 0))
    return false;
  i += 7;
  /* TAG: F or P (the CRI log format joins tags with ':'). */
  size_t t = i;
  while (i < len && ((line[i] >= 'A' && line[i] <= 'Z') || line[i] == ':'))
    i++;
  if (i == t || (i < len && line[i] != ' '))
    return false;
  *partial = i - t == 1 && line[t] == 'P';
  *text_off = i < len ? i + 1 : len;
  return true;
}

size_t
csr_hook_k8s_strip (char *log, size_t len)
{
  size_t r = 0, w = 0;
  while (r < len)
    {
      char *line = log + r;
      char *nl = memchr (line, '\n', len - r);
      size_t llen = nl ? (size_t)(nl - line) : len - r;
      size_t next = r + llen + (nl ? 1 : 0);
      size_t off;
      bool partial;
      if (parse_record (line, llen, &off, &partial))
        {
          /* The prefix ("2024- stdout F" at the least) is longer than the
           * newline added: the text and its newline fit where the record was. */
          memmove (log + w, line + off, llen - off);
          w += llen - off;
          if (!partial)
            log[w++] = '\n';
        }
      else
        {
          memmove (log + w, line, next - r);
          w += next - r;
        }
      r = next;
    }
  if (w < len)
    log[w] = '\0';
  return w;
}
