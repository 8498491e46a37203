/* csrun — sandbox files: the client's side (files.h): the request, the
 * reply, moving the data, and the host's side of cp (as the invoking user,
 * with files-tar.c). */
#include "config.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/json-gen.h"
#include "../util/json.h"
#include "files-tar.h"
#include "sandbox.h"

#define la csr_la

/* ------------------------------------------------------------ request and reply */

int
csr_files_start (int dirfd, const struct csr_files_req *r, int data, csr_error **err)
{
  static const char *const actions[] = { "read", "write", "get", "put", "ls", "find" };
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, err) < 0)
    return -1;
  csr_jgen_map_open (&w);
  csr_jgen_kv_str (&w, "op", "files");
  csr_jgen_kv_str (&w, "action", actions[r->action]);
  csr_jgen_kv_str (&w, "path", r->path);
  csr_jgen_str (&w, "raw");
  csr_jgen_bool (&w, r->raw_tar);
  csr_jgen_str (&w, "recursive");
  csr_jgen_bool (&w, r->recursive);
  if (r->pattern)
    csr_jgen_kv_str (&w, "pattern", r->pattern);
  csr_jgen_kv_int (&w, "mode", r->mode);
  csr_jgen_kv_int (&w, "max_bytes", (long long)r->max_bytes);
  csr_jgen_kv_int (&w, "max_entries", (long long)r->max_entries);
  csr_jgen_map_close (&w);
  cleanup_free char *req = csr_jgen_finish (&w, "the files request", NULL, err);
  if (req == NULL)
    return -1;
  return csr_sandbox_connect (dirfd, req, &data, 1, err);
}

static int
get_notes (yajl_val t, const char *key, struct csr_files_notes *n)
{
  yajl_val a = csr_json_get (t, key);
  for (size_t i = 0; a && YAJL_IS_ARRAY (a) && i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      if (csr_files_note_add (n, csr_json_str (csr_json_get (o, "path")),
                              csr_json_str (csr_json_get (o, "reason")))
          < 0)
        return -1;
    }
  char more[64];
  snprintf (more, sizeof more, "%s_more", key);
  n->more += csr_json_u64 (t, more);
  return 0;
}

int
csr_files_finish (int sock, struct csr_files_stats *st, bool *refused, csr_error **err)
{
  *refused = false;
  cleanup_free char *line = NULL;
  if (csr_sandbox_read_reply (sock, -1, &line, err) < 0)
    return -1;
  char ebuf[64];
  cleanup_yajl_val yajl_val t = yajl_tree_parse (line, ebuf, sizeof ebuf);
  if (t == NULL || !YAJL_IS_OBJECT (t))
    return csr_error_set (err, 0, "the keeper's reply is not JSON");
  st->files = csr_json_u64 (t, "files");
  st->dirs = csr_json_u64 (t, "dirs");
  st->symlinks = csr_json_u64 (t, "symlinks");
  st->hardlinks = csr_json_u64 (t, "hardlinks");
  st->bytes = csr_json_u64 (t, "bytes");
  st->entries = csr_json_u64 (t, "entries");
  st->truncated = YAJL_IS_TRUE (csr_json_get (t, "truncated"));
  st->error_errno = (int)csr_json_u64 (t, "errno");
  const char *p = csr_json_str (csr_json_get (t, "path")),
             *ty = csr_json_str (csr_json_get (t, "type"));
  free (st->path);
  st->path = p ? strdup (p) : NULL;
  snprintf (st->type, sizeof st->type, "%s", ty ? ty : "");
  if (get_notes (t, "skipped", &st->skipped) < 0 || get_notes (t, "refused", &st->refused) < 0)
    return csr_error_set (err, ENOMEM, "the keeper's reply");
  const char *msg = csr_json_str (csr_json_get (t, "error"));
  if (msg)
    {
      *refused = YAJL_IS_TRUE (csr_json_get (t, "refused"));
      /* The message has its errno's text already. */
      return csr_error_set (err, 0, "%s", msg);
    }
  return 0;
}

/* ------------------------------------------------------------ moving the data */

static int
pump_write (int out, const char *buf, size_t len, csr_error **err)
{
  while (len > 0)
    {
      ssize_t w = write (out, buf, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0 && errno == EAGAIN)
        {
          struct pollfd p = { out, POLLOUT, 0 };
          poll (&p, 1, -1);
          continue;
        }
      if (w <= 0)
        return csr_error_errno (err, "write");
      buf += w;
      len -= (size_t)w;
    }
  return 0;
}

int
csr_files_pump (int in, const char *in_what, int out, const char *out_what, int sock, uint64_t *n,
                bool *stopped, csr_error **err)
{
  static char buf[128 * 1024];
  bool can_splice = true;
  *stopped = false;
  for (;;)
    {
      struct pollfd p[2] = { { in, POLLIN, 0 }, { sock, POLLIN, 0 } };
      if (poll (p, sock >= 0 ? 2 : 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "poll");
        }
      if (sock >= 0 && p[1].revents)
        {
          *stopped = true;
          return 0;
        }
      ssize_t r = -1;
      int e = 0;
      if (can_splice)
        {
          r = splice (in, NULL, out, NULL, sizeof buf, SPLICE_F_MOVE);
          e = errno;
          if (r < 0 && (e == EINVAL || e == ENOSYS || e == EBADF))
            {
              can_splice = false;
              continue;
            }
        }
      else
        {
          r = read (in, buf, sizeof buf);
          e = errno;
          if (r > 0)
            {
              csr_error *we = NULL;
              if (pump_write (out, buf, (size_t)r, &we) < 0)
                {
                  e = we->status;
                  csr_error_free (we);
                  r = -2;
                }
            }
        }
      if (r == 0)
        return 0;
      if (r > 0)
        {
          *n += (uint64_t)r;
          continue;
        }
      if (e == EINTR || e == EAGAIN)
        continue;
      if (e == EPIPE && sock >= 0)
        {
          /* The worker stopped reading: its reply says why. */
          *stopped = true;
          return 0;
        }
      /* splice does not say which side failed: try the input alone. */
      if (r == -2 || e == EPIPE || e == ENOSPC || e == EDQUOT || e == EIO)
        return csr_error_set (err, e, "%s", out_what);
      return csr_error_set (err, e, "%s", in_what);
    }
}

int
csr_files_send_framed (int in, const char *in_what, int out, int sock, uint64_t *n, bool *stopped,
                       csr_error **err)
{
  static char buf[sizeof (uint32_t) + CSR_FILES_FRAME_MAX];
  *stopped = false;
  for (;;)
    {
      struct pollfd p[2] = { { in, POLLIN, 0 }, { sock, POLLIN, 0 } };
      if (poll (p, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "poll");
        }
      if (p[1].revents)
        {
          *stopped = true;
          return 0;
        }
      ssize_t r = read (in, buf + sizeof (uint32_t), CSR_FILES_FRAME_MAX);
      if (r < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (r < 0)
        return csr_error_errno (err, "%s", in_what);
      uint32_t len = (uint32_t)r;
      memcpy (buf, &len, sizeof len);
      csr_error *we = NULL;
      if (pump_write (out, buf, sizeof len + len, &we) < 0)
        {
          if (we->status != EPIPE)
            {
              *err = we;
              return -1;
            }
          csr_error_free (we);
          *stopped = true; /* the worker stopped reading: its reply says why */
          return 0;
        }
      *n += len;
      if (r == 0)
        return 0;
    }
}

int
csr_files_read_list (int fd, uint64_t max, struct csr_files_rec **v, size_t *n, csr_error **err)
{
  *v = NULL;
  *n = 0;
  size_t cap_v = 0, cap = 256 * 1024, len = 0;
  cleanup_free char *buf = malloc (cap);
  if (buf == NULL)
    return csr_error_set (err, ENOMEM, "listing");
  bool eof = false;
  while (!eof || len > 0)
    {
      if (!eof)
        {
          ssize_t r = read (fd, buf + len, cap - len);
          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            return csr_error_errno (err, "read the listing");
          eof = r == 0;
          len += (size_t)r;
        }
      size_t off = 0;
      for (;;)
        {
          struct csr_files_rec r;
          ssize_t used = csr_files_rec_decode (buf + off, len - off, &r);
          if (used < 0)
            return csr_error_set (err, EPROTO, "a malformed listing");
          if (used == 0)
            break;
          if (*n >= max)
            return csr_error_set (err, EPROTO, "a listing longer than asked");
          if (*n == cap_v)
            {
              cap_v = cap_v ? cap_v * 2 : 256;
              struct csr_files_rec *nv = realloc (*v, cap_v * sizeof *nv);
              if (nv == NULL)
                return csr_error_set (err, ENOMEM, "listing");
              *v = nv;
            }
          r.path = strdup (r.path);
          r.target = r.target ? strdup (r.target) : NULL;
          (*v)[(*n)++] = r;
          if (r.path == NULL)
            return csr_error_set (err, ENOMEM, "listing");
          off += (size_t)used;
        }
      memmove (buf, buf + off, len - off);
      len -= off;
      if (eof && len > 0)
        return csr_error_set (err, EPROTO, "a truncated listing");
    }
  return 0;
}

void
csr_files_list_free (struct csr_files_rec *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].path);
      free (v[i].target);
    }
  free (v);
}

/* ------------------------------------------------------------ the host's side of cp */

/* "a/b/" -> "a/b"; "/" stays. */
static char *
strip_slashes (const char *p)
{
  char *s = strdup (p);
  if (s == NULL)
    return NULL;
  size_t n = strlen (s);
  while (n > 1 && s[n - 1] == '/')
    s[--n] = '\0';
  return s;
}

int
csr_files_host_pack (int fd, const char *src, const struct csr_files_limits *lim,
                     struct csr_files_stats *st, csr_error **err)
{
  if (csr_la_load (err) < 0)
    return -1;
  cleanup_free char *s = strip_slashes (src);
  cleanup_free char *d = s ? strdup (s) : NULL;
  if (d == NULL)
    return csr_error_set (err, ENOMEM, "%s", src);
  const char *leaf = basename (s);
  bool contents = strcmp (s, "/") == 0 || strcmp (leaf, ".") == 0 || strcmp (leaf, "..") == 0;
  cleanup_close int dirfd = contents ? open (s, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
                                     : open (dirname (d), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return csr_error_errno (err, "%s", src);
  if (contents)
    leaf = ".";
  struct stat sb;
  if (fstatat (dirfd, leaf, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "%s", src);
  struct archive *a = csr_ftar_writer (fd, err);
  if (a == NULL)
    return -1;
  if (csr_ftar_pack (a, dirfd, leaf, leaf, lim, st, err) < 0)
    {
      la.archive_write_free (a);
      return csr_error_wrap (err, "%s", src);
    }
  return csr_ftar_writer_close (a, err);
}

static int
host_kind (const char *path, csr_error **err)
{
  struct stat s;
  if (stat (path, &s) == 0)
    return S_ISDIR (s.st_mode) ? CSR_FILES_IS_DIR : CSR_FILES_IS_OTHER;
  if (errno == ENOENT)
    return CSR_FILES_MISSING;
  return csr_error_errno (err, "%s", path);
}

static int
host_unpack_at (struct archive *a, struct archive_entry *first, const char *dst,
                const struct csr_files_limits *lim, struct csr_files_stats *st, csr_error **err)
{
  char top[CSR_FILES_PATH_MAX];
  if (csr_ftar_top (first, top, err) < 0)
    return -1;
  size_t dl = strlen (dst);
  bool slash = dst[dl - 1] == '/' || (dl >= 2 && strcmp (dst + dl - 2, "/.") == 0)
               || strcmp (dst, ".") == 0 || strcmp (dst, "..") == 0
               || (dl >= 3 && strcmp (dst + dl - 3, "/..") == 0);
  int kind = host_kind (dst, err);
  if (kind < 0)
    return -1;
  int place = csr_files_place (dst, kind, slash, top, err);
  if (place < 0)
    return -1;
  mode_t mask = umask (0);
  umask (mask);
  cleanup_free char *s = strip_slashes (dst);
  cleanup_free char *d = s ? strdup (s) : NULL;
  if (d == NULL)
    return csr_error_set (err, ENOMEM, "%s", dst);
  const char *dir = place == CSR_FILES_PLACE_INTO ? s : dirname (d);
  if (kind == CSR_FILES_MISSING && csr_mkdir_p (dir, 0777 & ~mask, err) < 0)
    return -1;
  cleanup_close int base = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (base < 0)
    return csr_error_errno (err, "%s", dir);
  struct csr_ftar_dest dest = {
    .basefd = base,
    .top = top,
    .rename = place == CSR_FILES_PLACE_AS ? basename (s) : NULL,
    .umask = mask,
    .parent_mode = 0777,
  };
  return csr_ftar_unpack (a, first, &dest, lim, st, err);
}

int
csr_files_host_unpack (int fd, const char *dst, const struct csr_files_limits *lim,
                       struct csr_files_stats *st, csr_error **err)
{
  if (csr_la_load (err) < 0)
    return -1;
  if (dst == NULL || *dst == '\0')
    return csr_error_set (err, EINVAL, "an empty destination");
  struct archive *a = csr_ftar_reader (fd, err);
  if (a == NULL)
    return -1;
  struct archive_entry *first = NULL;
  int r = la.archive_read_next_header (a, &first), rc = 0;
  if (r < ARCHIVE_WARN)
    rc = csr_error_set (err, csr_ftar_errno (a), "read the tar: %s", la.archive_error_string (a));
  else if (r != ARCHIVE_EOF)
    rc = host_unpack_at (a, first, dst, lim, st, err);
  la.archive_read_free (a);
  return rc;
}
