/* csrun — the manifest of an unpacked rootfs tree: one line per entry (type,
 * mode, size, digest or symlink target, path), written when the tree is
 * unpacked and read back to verify and repair it. */
#include "config.h"
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"

#define MANIFEST_MAGIC "csrun-manifest 1"
#define MANIFEST_MAX (64u << 20)
#define TMP_PREFIX ".tmp-"

void
csr_manifest_release (struct csr_manifest *m)
{
  for (size_t i = 0; i < m->n; i++)
    {
      free (m->entries[i].data);
      free (m->entries[i].path);
    }
  free (m->entries);
  free (m->source);
  memset (m, 0, sizeof *m);
}

ssize_t
csr_manifest_add (struct csr_manifest *m, char type, mode_t mode, uint64_t size, const char *data,
                  const char *path, csr_error **err)
{
  if (m->n == m->cap)
    {
      size_t ncap = m->cap ? m->cap * 2 : 1024;
      struct csr_manifest_entry *n = realloc (m->entries, ncap * sizeof *n);
      if (n == NULL)
        return csr_error_errno (err, "manifest: cannot allocate");
      m->entries = n;
      m->cap = ncap;
    }
  struct csr_manifest_entry *e = &m->entries[m->n];
  e->type = type;
  e->mode = mode & 07777;
  e->size = size;
  e->data = data ? strdup (data) : NULL;
  e->path = strdup (path);
  if ((data && e->data == NULL) || e->path == NULL)
    {
      free (e->data);
      free (e->path);
      return csr_error_errno (err, "manifest: cannot allocate");
    }
  return (ssize_t)m->n++;
}

/* ---------------------------------------------------------------- text form */

static bool
needs_escape (unsigned char c)
{
  return c <= 0x20 || c == 0x7f || c == '\\';
}

static void
put_escaped (FILE *f, const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (needs_escape (*p))
      fprintf (f, "\\%03o", *p);
    else
      fputc (*p, f);
}

int
csr_manifest_format (const struct csr_manifest *m, char **out, size_t *len, csr_error **err)
{
  *out = NULL;
  *len = 0;
  FILE *f = open_memstream (out, len);
  if (f == NULL)
    return csr_error_errno (err, "manifest: open_memstream");
  fputs (MANIFEST_MAGIC "\nsource ", f);
  put_escaped (f, m->source && *m->source ? m->source : "-");
  fprintf (f, "\nsha256 %s\nbytes %" PRIu64 "\nentries %zu\n", m->sha256[0] ? m->sha256 : "-",
           m->bytes, m->n);
  for (size_t i = 0; i < m->n; i++)
    {
      const struct csr_manifest_entry *e = &m->entries[i];
      fprintf (f, "%c %04o %" PRIu64 " ", e->type, (unsigned)e->mode, e->size);
      put_escaped (f, e->data && *e->data ? e->data : "-");
      fputc (' ', f);
      put_escaped (f, e->path);
      fputc ('\n', f);
    }
  if (ferror (f))
    {
      fclose (f);
      free (*out);
      *out = NULL;
      return csr_error_set (err, ENOMEM, "manifest: cannot format");
    }
  if (fclose (f) != 0)
    {
      free (*out);
      *out = NULL;
      return csr_error_errno (err, "manifest: cannot format");
    }
  return 0;
}

/* Unescape [S, S+N) into a new string; NULL on a bad escape or no memory. */
static char *
unescape (const char *s, size_t n)
{
  char *out = malloc (n + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (s[i] != '\\')
        {
          out[o++] = s[i];
          continue;
        }
      unsigned v = 0;
      for (size_t k = 1; k <= 3; k++)
        {
          if (i + k >= n || s[i + k] < '0' || s[i + k] > '7')
            goto bad;
          v = v * 8 + (unsigned)(s[i + k] - '0');
        }
      if (v == 0 || v > 0xff)
        goto bad;
      out[o++] = (char)v;
      i += 3;
    }
  out[o] = '\0';
  return out;
bad:
  free (out);
  return NULL;
}

/* Split LINE (without its newline) into exactly N space-separated fields. */
static bool
split (const char *line, size_t len, const char **f, size_t *flen, size_t n)
{
  size_t k = 0, i = 0;
  while (k < n)
    {
      size_t start = i;
      while (i < len && line[i] != ' ')
        i++;
      if (i == start)
        return false;
      f[k] = line + start;
      flen[k] = i - start;
      k++;
      if (k < n)
        {
          if (i == len)
            return false;
          i++;
        }
    }
  return i == len;
}

static bool
parse_u64 (const char *s, size_t n, int base, uint64_t *v)
{
  if (n == 0 || n > 22)
    return false;
  char buf[24];
  memcpy (buf, s, n);
  buf[n] = '\0';
  char *end;
  errno = 0;
  unsigned long long x = strtoull (buf, &end, base);
  if (errno || *end || buf[0] == '-' || buf[0] == '+')
    return false;
  *v = x;
  return true;
}

/* A header line "KEY VALUE"; returns the value's start or NULL. */
static const char *
header (const char *line, size_t len, const char *key, size_t *vlen)
{
  size_t k = strlen (key);
  if (len <= k + 1 || memcmp (line, key, k) != 0 || line[k] != ' ')
    return NULL;
  *vlen = len - k - 1;
  return line + k + 1;
}

static int
parse_entry (struct csr_manifest *m, const char *line, size_t len, size_t lineno, csr_error **err)
{
  const char *f[5];
  size_t fl[5];
  uint64_t mode, size;
  if (!split (line, len, f, fl, 5) || fl[0] != 1 || strchr ("fdl", f[0][0]) == NULL
      || !parse_u64 (f[1], fl[1], 8, &mode) || mode > 07777 || !parse_u64 (f[2], fl[2], 10, &size))
    return csr_error_set (err, 0, "manifest line %zu: malformed entry", lineno);
  cleanup_free char *data = NULL;
  if (!(fl[3] == 1 && f[3][0] == '-') && (data = unescape (f[3], fl[3])) == NULL)
    return csr_error_set (err, 0, "manifest line %zu: malformed field", lineno);
  cleanup_free char *path = unescape (f[4], fl[4]);
  if (path == NULL || path[0] == '/')
    return csr_error_set (err, 0, "manifest line %zu: malformed path", lineno);
  char type = f[0][0];
  if ((type == 'f' && (data == NULL || strlen (data) != CSR_SHA256_HEX_LEN))
      || (type == 'l' && data == NULL))
    return csr_error_set (err, 0, "manifest line %zu: entry without its data", lineno);
  if (csr_manifest_add (m, type, (mode_t)mode, size, data, path, err) < 0)
    return -1;
  return 0;
}

int
csr_manifest_parse (const char *text, size_t len, struct csr_manifest *m, csr_error **err)
{
  memset (m, 0, sizeof *m);
  size_t lineno = 0;
  uint64_t want = 0;
  const char *p = text, *end = text + len;
  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t)(end - p));
      if (nl == NULL)
        {
          csr_error_set (err, 0, "manifest: the last line is cut off");
          goto fail;
        }
      size_t n = (size_t)(nl - p);
      const char *v;
      size_t vl;
      lineno++;
      if (lineno == 1)
        {
          if (n != strlen (MANIFEST_MAGIC) || memcmp (p, MANIFEST_MAGIC, n) != 0)
            {
              csr_error_set (err, 0, "not a csrun manifest (version 1)");
              goto fail;
            }
        }
      else if (lineno == 2 && (v = header (p, n, "source", &vl)))
        {
          if (!(vl == 1 && v[0] == '-') && (m->source = unescape (v, vl)) == NULL)
            {
              csr_error_set (err, 0, "manifest line 2: malformed source");
              goto fail;
            }
        }
      else if (lineno == 3 && (v = header (p, n, "sha256", &vl)))
        {
          if (vl == CSR_SHA256_HEX_LEN)
            memcpy (m->sha256, v, vl);
          m->sha256[vl == CSR_SHA256_HEX_LEN ? vl : 0] = '\0';
        }
      else if (lineno == 4 && (v = header (p, n, "bytes", &vl)))
        {
          if (!parse_u64 (v, vl, 10, &m->bytes))
            {
              csr_error_set (err, 0, "manifest line 4: malformed size");
              goto fail;
            }
        }
      else if (lineno == 5 && (v = header (p, n, "entries", &vl)))
        {
          if (!parse_u64 (v, vl, 10, &want))
            {
              csr_error_set (err, 0, "manifest line 5: malformed count");
              goto fail;
            }
        }
      else if (lineno <= 5)
        {
          csr_error_set (err, 0, "manifest line %zu: malformed header", lineno);
          goto fail;
        }
      else if (parse_entry (m, p, n, lineno, err) < 0)
        goto fail;
      p = nl + 1;
    }
  if (lineno < 5 || m->n != want)
    {
      csr_error_set (err, 0, "manifest: %zu entries, the header says %" PRIu64, m->n, want);
      goto fail;
    }
  return 0;
fail:
  csr_manifest_release (m);
  return -1;
}

/* ---------------------------------------------------------------- files */

int
csr_manifest_write (int dirfd, const char *name, const struct csr_manifest *m, csr_error **err)
{
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (csr_manifest_format (m, &text, &len, err) < 0)
    return -1;
  char tmp[256];
  if (snprintf (tmp, sizeof tmp, TMP_PREFIX "%.40s-%ld", name, (long)getpid ()) >= (int)sizeof tmp)
    return csr_error_set (err, ENAMETOOLONG, "manifest '%s'", name);
  (void)unlinkat (dirfd, tmp, 0);
  cleanup_close int fd
      = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0)
    return csr_error_errno (err, "manifest '%s': create", name);
  int ret = -1;
  if (fchmod (fd, 0444) < 0)
    csr_error_errno (err, "manifest '%s': chmod", name);
  else if (csr_write_all (fd, text, len, err) < 0)
    csr_error_wrap (err, "manifest '%s'", name);
  else if (fsync (fd) < 0)
    csr_error_errno (err, "manifest '%s': fsync", name);
  else if (close (steal_fd (&fd)) < 0)
    csr_error_errno (err, "manifest '%s': close", name);
  else if (renameat (dirfd, tmp, dirfd, name) < 0)
    csr_error_errno (err, "manifest '%s': rename", name);
  else
    ret = 0;
  if (ret < 0)
    (void)unlinkat (dirfd, tmp, 0);
  return ret;
}

int
csr_manifest_read (int dirfd, const char *name, struct csr_manifest *m, csr_error **err)
{
  memset (m, 0, sizeof *m);
  cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return csr_error_errno (err, "manifest '%s'", name);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "manifest '%s'", name);
  if (!S_ISREG (st.st_mode))
    return csr_error_set (err, 0, "manifest '%s': not a regular file", name);
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (csr_read_fd (fd, MANIFEST_MAX, &text, &len, err) < 0)
    return csr_error_wrap (err, "manifest '%s'", name);
  if (csr_manifest_parse (text, len, m, err) < 0)
    return csr_error_wrap (err, "manifest '%s'", name);
  return 0;
}
