#include "config.h"

/* csrun — /proc/self/mountinfo (see mountinfo.h). */

#include "mountinfo.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../util/fs.h"

/* Undo the octal escapes of a field in place. */
static void
unescape (char *s)
{
  char *o = s;
  for (char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0'
          && p[3] <= '7')
        {
          *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
          p += 3;
        }
      else
        *o++ = *p;
    }
  *o = '\0';
}

/* The next space-separated field of *P, NUL-terminated in place; NULL at the end. */
static char *
next_field (char **p)
{
  char *s = *p;
  if (s == NULL || *s == '\0')
    return NULL;
  char *e = strchr (s, ' ');
  if (e)
    {
      *e = '\0';
      *p = e + 1;
    }
  else
    *p = s + strlen (s);
  return s;
}

static bool
parse_int (const char *s, int *out)
{
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (errno || end == s || *end || v < 0 || v > INT32_MAX)
    return false;
  *out = (int)v;
  return true;
}

/* LINE (NUL-terminated, modified in place) into *E: false when malformed. */
static bool
parse_line (char *line, struct csr_mountinfo_entry *e)
{
  /* The separator " - " ends the optional fields: find it first, so that
   * the optional fields are kept as one string. */
  char *sep = strstr (line, " - ");
  if (sep == NULL)
    return false;
  *sep = '\0';
  char *tail = sep + 3;
  char *p = line;
  char *f[6];
  for (int i = 0; i < 6; i++)
    if ((f[i] = next_field (&p)) == NULL)
      return false;
  char *devsep = strchr (f[2], ':');
  if (!parse_int (f[0], &e->id) || !parse_int (f[1], &e->parent) || devsep == NULL)
    return false;
  *devsep = '\0';
  int maj, min;
  if (!parse_int (f[2], &maj) || !parse_int (devsep + 1, &min))
    return false;
  e->major = (unsigned)maj;
  e->minor = (unsigned)min;
  unescape (f[3]);
  unescape (f[4]);
  e->root = f[3];
  e->mount_point = f[4];
  e->mount_opts = f[5];
  e->optional = p; /* the rest before " - " */
  char *fstype = next_field (&tail);
  char *source = next_field (&tail);
  char *super = next_field (&tail);
  if (fstype == NULL || source == NULL)
    return false;
  unescape (source);
  e->fstype = fstype;
  e->source = source;
  e->super_opts = super ? super : "";
  return true;
}

int
csr_mountinfo_parse (const char *text, struct csr_mountinfo *mi, csr_error **err)
{
  memset (mi, 0, sizeof *mi);
  size_t lines = 1;
  for (const char *c = text; *c; c++)
    lines += *c == '\n';
  mi->buf = strdup (text);
  mi->e = calloc (lines, sizeof *mi->e);
  if (mi->buf == NULL || mi->e == NULL)
    {
      csr_mountinfo_release (mi);
      return csr_error_errno (err, "parse mountinfo");
    }
  char *save = NULL;
  for (char *line = strtok_r (mi->buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    if (parse_line (line, &mi->e[mi->n]))
      mi->n++;
  return 0;
}

int
csr_mountinfo_read (struct csr_mountinfo *mi, csr_error **err)
{
  char *text = NULL;
  size_t len;
  memset (mi, 0, sizeof *mi);
  if (csr_read_file ("/proc/self/mountinfo", 16u << 20, &text, &len, err) < 0)
    return csr_error_wrap (err, "read /proc/self/mountinfo");
  int rc = csr_mountinfo_parse (text, mi, err);
  free (text);
  return rc;
}

void
csr_mountinfo_release (struct csr_mountinfo *mi)
{
  free (mi->e);
  free (mi->buf);
  memset (mi, 0, sizeof *mi);
}

bool
csr_mountinfo_has_opt (const char *opts, const char *word)
{
  size_t wl = strlen (word);
  for (const char *p = opts; p && *p;)
    {
      const char *c = strchr (p, ',');
      size_t l = c ? (size_t)(c - p) : strlen (p);
      if (l == wl && memcmp (p, word, wl) == 0)
        return true;
      p = c ? c + 1 : NULL;
    }
  return false;
}

bool
csr_mountinfo_under (const char *path, const char *mnt)
{
  if (strcmp (mnt, "/") == 0)
    return path[0] == '/';
  size_t n = strlen (mnt);
  return strncmp (path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0');
}
