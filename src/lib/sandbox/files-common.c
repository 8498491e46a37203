/* csrun — sandbox files (files.h): the pure parts shared by the client and
 * the worker: paths, tar entry names, where a tree goes, listing records,
 * notes. */
#include "config.h"
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/json-gen.h"
#include "../util/path.h"

int
csr_files_note_add (struct csr_files_notes *n, const char *path, const char *reason)
{
  if (n->n >= CSR_FILES_MAX_NOTES)
    {
      n->more++;
      return 0;
    }
  if (n->n == n->cap)
    {
      size_t cap = n->cap ? n->cap * 2 : 8;
      struct csr_files_note *v = realloc (n->v, cap * sizeof *v);
      if (v == NULL)
        return -1;
      n->v = v;
      n->cap = cap;
    }
  /* Bounded: the notes travel in the keeper's one-line reply. */
  char *p = strndup (path ? path : "", 255), *r = strndup (reason ? reason : "", 160);
  if (p == NULL || r == NULL)
    {
      free (p);
      free (r);
      return -1;
    }
  n->v[n->n++] = (struct csr_files_note){ p, r };
  return 0;
}

static void
notes_release (struct csr_files_notes *n)
{
  for (size_t i = 0; i < n->n; i++)
    {
      free (n->v[i].path);
      free (n->v[i].reason);
    }
  free (n->v);
  memset (n, 0, sizeof *n);
}

void
csr_files_stats_release (struct csr_files_stats *st)
{
  notes_release (&st->skipped);
  notes_release (&st->refused);
  free (st->path);
  st->path = NULL;
}

void
csr_files_gen_notes (struct csr_jgen *w, const char *key, const struct csr_files_notes *n)
{
  csr_jgen_str (w, key);
  csr_jgen_array_open (w);
  for (size_t i = 0; i < n->n; i++)
    {
      csr_jgen_map_open (w);
      csr_jgen_kv_str (w, "path", n->v[i].path);
      csr_jgen_kv_str (w, "reason", n->v[i].reason);
      csr_jgen_map_close (w);
    }
  csr_jgen_array_close (w);
  char more[64];
  snprintf (more, sizeof more, "%s_more", key);
  csr_jgen_kv_int (w, more, (long long)n->more);
}

/* ------------------------------------------------------------ paths */

int
csr_files_clean_path (const char *workdir, const char *path, char **out, bool *slash,
                      csr_error **err)
{
  *out = NULL;
  if (path == NULL || *path == '\0')
    return csr_error_set (err, EINVAL, "an empty path");
  size_t plen = strlen (path);
  size_t wlen = path[0] == '/' || workdir == NULL ? 0 : strlen (workdir);
  if (plen >= CSR_FILES_PATH_MAX || wlen >= CSR_FILES_PATH_MAX)
    return csr_error_set (err, ENAMETOOLONG, "%.64s...: path too long", path);
  char *o = malloc (wlen + plen + 3);
  if (o == NULL)
    return csr_error_set (err, ENOMEM, "path");
  size_t n = 0;
  bool last_dir = false;
  for (int part = 0; part < 2; part++)
    {
      const char *p = part == 0 ? (wlen ? workdir : "") : path, *c;
      size_t len;
      while ((c = csr_path_next (&p, &len)) != NULL)
        {
          last_dir = csr_path_is_dot (c, len) || csr_path_is_dotdot (c, len);
          if (csr_path_is_dot (c, len))
            continue;
          if (csr_path_is_dotdot (c, len))
            {
              if (n == 0)
                {
                  free (o);
                  return csr_error_set (err, 0, "%s: leaves the sandbox's /", path);
                }
              while (n > 0 && o[n - 1] != '/')
                n--;
              if (n > 0)
                n--; /* the '/' */
              continue;
            }
          o[n++] = '/';
          memcpy (o + n, c, len);
          n += len;
        }
    }
  if (n == 0)
    o[n++] = '/';
  o[n] = '\0';
  if (slash)
    *slash = last_dir || path[plen - 1] == '/';
  *out = o;
  return 0;
}

int
csr_files_entry_name (const char *name, char *out, size_t size)
{
  if (name == NULL || *name == '\0')
    return CSR_FILES_NAME_EMPTY;
  if (name[0] == '/')
    return CSR_FILES_NAME_ABSOLUTE;
  if (size > CSR_FILES_PATH_MAX)
    size = CSR_FILES_PATH_MAX;
  size_t n = 0, len;
  const char *p = name, *c;
  while ((c = csr_path_next (&p, &len)) != NULL)
    {
      if (csr_path_is_dot (c, len))
        continue;
      if (csr_path_is_dotdot (c, len))
        return CSR_FILES_NAME_DOTDOT;
      if (n + (n > 0) + len + 1 > size)
        return CSR_FILES_NAME_LONG;
      if (n > 0)
        out[n++] = '/';
      memcpy (out + n, c, len);
      n += len;
    }
  out[n] = '\0';
  return 0;
}

const char *
csr_files_name_reason (int why)
{
  switch (why)
    {
    case CSR_FILES_NAME_ABSOLUTE:
      return "an absolute name (refused)";
    case CSR_FILES_NAME_DOTDOT:
      return "a name with '..' (refused)";
    case CSR_FILES_NAME_LONG:
      return "a name too long";
    case CSR_FILES_NAME_EMPTY:
      return "an empty name";
    default:
      return "a bad name";
    }
}

int
csr_files_place (const char *dst, int dst_kind, bool slash, const char *top, csr_error **err)
{
  bool into_only = top == NULL || strcmp (top, ".") == 0;
  if (dst_kind == CSR_FILES_IS_DIR)
    return CSR_FILES_PLACE_INTO;
  if (dst_kind == CSR_FILES_IS_OTHER)
    {
      if (slash || into_only)
        return csr_error_set (err, ENOTDIR, "%s: not a directory", dst);
      return CSR_FILES_PLACE_AS;
    }
  return slash || into_only ? CSR_FILES_PLACE_INTO : CSR_FILES_PLACE_AS;
}

bool
csr_files_split_arg (const char *arg, char **id, char **path)
{
  const char *colon = strchr (arg, ':');
  if (colon == NULL || colon == arg || colon[1] == '\0')
    return false;
  if (memchr (arg, '/', (size_t)(colon - arg)))
    return false;
  *id = strndup (arg, (size_t)(colon - arg));
  *path = strdup (colon + 1);
  if (*id == NULL || *path == NULL)
    {
      free (*id);
      free (*path);
      *id = *path = NULL;
      return false;
    }
  return true;
}

/* ------------------------------------------------------------ records */

int
csr_files_type_of (mode_t mode)
{
  switch (mode & S_IFMT)
    {
    case S_IFREG:
      return CSR_FT_FILE;
    case S_IFDIR:
      return CSR_FT_DIR;
    case S_IFLNK:
      return CSR_FT_SYMLINK;
    case S_IFIFO:
      return CSR_FT_FIFO;
    case S_IFSOCK:
      return CSR_FT_SOCKET;
    case S_IFCHR:
      return CSR_FT_CHAR;
    case S_IFBLK:
      return CSR_FT_BLOCK;
    default:
      return CSR_FT_OTHER;
    }
}

const char *
csr_files_type_name (int type)
{
  static const char *const names[]
      = { "other", "file", "dir", "symlink", "fifo", "socket", "char", "block" };
  return type >= 0 && type <= CSR_FT_BLOCK ? names[type] : "other";
}

#define REC_MAGIC 0x31524643u /* "CFR1" */

struct rec_hdr
{
  uint32_t magic;
  uint8_t type;
  uint8_t pad[3];
  uint32_t mode;
  uint32_t mtime_ns;
  uint32_t path_len, target_len;
  uint64_t size;
  int64_t mtime;
};

size_t
csr_files_rec_encode (const struct csr_files_rec *r, char *buf, size_t cap)
{
  size_t pl = r->path ? strlen (r->path) : 0, tl = r->target ? strlen (r->target) : 0;
  if (pl >= CSR_FILES_PATH_MAX || tl >= CSR_FILES_PATH_MAX || r->type < 0 || r->type > CSR_FT_BLOCK)
    return 0;
  struct rec_hdr h = {
    .magic = REC_MAGIC,
    .type = (uint8_t)r->type,
    .mode = r->mode & 07777,
    .mtime_ns = r->mtime_ns,
    .path_len = (uint32_t)pl,
    .target_len = (uint32_t)tl,
    .size = r->size,
    .mtime = r->mtime,
  };
  size_t total = sizeof h + pl + 1 + tl + 1;
  if (total > cap)
    return 0;
  memcpy (buf, &h, sizeof h);
  memcpy (buf + sizeof h, r->path ? r->path : "", pl + 1);
  memcpy (buf + sizeof h + pl + 1, r->target ? r->target : "", tl + 1);
  return total;
}

ssize_t
csr_files_rec_decode (const char *buf, size_t len, struct csr_files_rec *r)
{
  struct rec_hdr h;
  if (len < sizeof h)
    return 0;
  memcpy (&h, buf, sizeof h);
  if (h.magic != REC_MAGIC || h.type > CSR_FT_BLOCK || h.path_len >= CSR_FILES_PATH_MAX
      || h.target_len >= CSR_FILES_PATH_MAX || (h.mode & ~07777u) || h.mtime_ns >= 1000000000u)
    return -1;
  size_t total = sizeof h + h.path_len + 1 + h.target_len + 1;
  if (len < total)
    return 0;
  const char *p = buf + sizeof h, *t = p + h.path_len + 1;
  if (p[h.path_len] != '\0' || t[h.target_len] != '\0' || memchr (p, '\0', h.path_len)
      || memchr (t, '\0', h.target_len))
    return -1;
  r->type = h.type;
  r->mode = h.mode;
  r->size = h.size;
  r->mtime = h.mtime;
  r->mtime_ns = h.mtime_ns;
  r->path = (char *)p;
  r->target = h.type == CSR_FT_SYMLINK ? (char *)t : NULL;
  return (ssize_t)total;
}
