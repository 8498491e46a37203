/* csrun — a checkpoint's archive, the writing side (checkpoint.h): spec.json,
 * then the layer as overlayfs keeps it, walked without following anything,
 * then the sessions' saves, as a zstd pax tar through libarchive (util/archive-lib.h); the digest
 * and the size are taken on the compressed bytes as they are written. */
#include "config.h"
#include "checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "../util/archive-lib.h"
#include "../util/cleanup.h"
#include "../util/fs.h"

#define MAX_DEPTH 256
#define DATA_CHUNK (256 * 1024)
#define OUT_BLOCK (256 * 1024) /* bytes per write of the compressed archive */
#define XATTR_LIST_MAX_BYTES 65536
#define XATTR_VALUE_MAX_BYTES 65536

struct inode_key
{
  dev_t dev;
  ino_t ino;
  char *path; /* the first name it was archived under */
};

struct packer
{
  struct archive *a;
  struct archive_entry *e;
  int out_fd;
  struct csr_sha256 sha;
  uint64_t written;
  int write_errno;
  struct csr_ckpt_stats *st;
  void *inodes; /* tsearch tree of struct inode_key */
  char path[PATH_MAX + 16];
  char *buf;
};

static la_ssize_t
write_cb (struct archive *a, void *client, const void *buf, size_t len)
{
  (void)a;
  struct packer *p = client;
  csr_error *e = NULL;
  if (csr_write_all (p->out_fd, buf, len, &e) < 0)
    {
      p->write_errno = e->status ? e->status : EIO;
      csr_error_free (e);
      return -1;
    }
  csr_sha256_update (&p->sha, buf, len);
  p->written += len;
  return (la_ssize_t)len;
}

/* The archive's error, or the output's (ENOSPC is the output's). */
static int
la_fail (struct packer *p, const char *what, csr_error **err)
{
  if (p->write_errno)
    return csr_error_set (err, p->write_errno, "write the checkpoint (%s)", what);
  return csr_error_set (err, csr_la.archive_errno (p->a), "write the checkpoint (%s): %s", what,
                        csr_la.archive_error_string (p->a) ? csr_la.archive_error_string (p->a)
                                                           : "libarchive failed");
}

static int
cmp_inode (const void *a, const void *b)
{
  const struct inode_key *x = a, *y = b;
  if (x->dev != y->dev)
    return x->dev < y->dev ? -1 : 1;
  if (x->ino != y->ino)
    return x->ino < y->ino ? -1 : 1;
  return 0;
}

static void
free_inode (void *k)
{
  struct inode_key *x = k;
  free (x->path);
  free (x);
}

/* The user.* extended attributes of FD (or, FD < 0, of PATH without
 * following it) into the entry; the others are noted as not saved. */
static int
add_xattrs (struct packer *p, int fd, const char *path, bool *opaque, csr_error **err)
{
  char list[XATTR_LIST_MAX_BYTES];
  ssize_t n = fd >= 0 ? flistxattr (fd, list, sizeof list) : llistxattr (path, list, sizeof list);
  if (n < 0)
    {
      if (errno == ENOTSUP || errno == EPERM)
        return 0;
      return csr_error_errno (err, "list the extended attributes of %s", p->path);
    }
  for (char *name = list; name < list + n; name += strlen (name) + 1)
    {
      if (strncmp (name, "user.", 5) != 0)
        {
          csr_ckpt_stats_note (p->st, "%s: extended attribute %s", p->path, name);
          continue;
        }
      static char value[XATTR_VALUE_MAX_BYTES];
      ssize_t v = fd >= 0 ? fgetxattr (fd, name, value, sizeof value)
                          : lgetxattr (path, name, value, sizeof value);
      if (v < 0)
        return csr_error_errno (err, "read the extended attribute %s of %s", name, p->path);
      csr_la.archive_entry_xattr_add_entry (p->e, name, value, (size_t)v);
      if (strcmp (name, "user.overlay.opaque") == 0)
        *opaque = true;
    }
  return 0;
}

static int
write_header (struct packer *p, const struct stat *st, csr_error **err)
{
  csr_la.archive_entry_set_pathname (p->e, p->path);
  csr_la.archive_entry_set_mode (p->e, st->st_mode);
  csr_la.archive_entry_set_uid (p->e, st->st_uid);
  csr_la.archive_entry_set_gid (p->e, st->st_gid);
  csr_la.archive_entry_set_mtime (p->e, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
  if (csr_la.archive_write_header (p->a, p->e) < ARCHIVE_WARN)
    return la_fail (p, p->path, err);
  return 0;
}

/* The data regions of the file FD (SIZE bytes) when it has holes (a
 * sparse file; none when it is all hole), at most MAX_REGIONS; -1: no hole
 * (or too many regions to map: the file is written whole). */
struct region
{
  off_t off, len;
};
#define MAX_REGIONS 4096

static ssize_t
data_regions (int fd, off_t size, struct region *r)
{
  ssize_t n = 0;
  off_t pos = 0;
  off_t first = lseek (fd, 0, SEEK_HOLE);
  if (size == 0 || first < 0 || first >= size)
    return -1; /* no hole, or SEEK_HOLE not supported */
  while (pos < size)
    {
      off_t d = lseek (fd, pos, SEEK_DATA);
      if (d < 0 && errno == ENXIO)
        break; /* a hole to the end */
      if (d < 0 || n == MAX_REGIONS)
        return -1;
      off_t h = lseek (fd, d, SEEK_HOLE);
      if (h < 0 || h > size)
        h = size;
      r[n++] = (struct region){ d, h - d };
      pos = h;
    }
  return n;
}

/* LEN bytes of FD from OFF (or, FD < 0, of zeros: a hole the archive
 * skips) into the archive. */
static int
feed (struct packer *p, int fd, off_t off, uint64_t len, csr_error **err)
{
  static const char zeros[DATA_CHUNK];
  while (len > 0)
    {
      size_t want = len < DATA_CHUNK ? (size_t)len : DATA_CHUNK;
      const char *buf = zeros;
      ssize_t r = (ssize_t)want;
      if (fd >= 0)
        {
          r = pread (fd, p->buf, want, off);
          if (r < 0 && errno == EINTR)
            continue;
          if (r < 0)
            return csr_error_errno (err, "read %s", p->path);
          if (r == 0)
            return csr_error_set (err, EAGAIN, "%s shrank while it was saved", p->path);
          buf = p->buf;
        }
      if (csr_la.archive_write_data (p->a, buf, (size_t)r) != r)
        return la_fail (p, p->path, err);
      off += r;
      len -= (uint64_t)r;
    }
  return 0;
}

/* A regular file's header and contents: exactly SIZE bytes (else it
 * changed while the sandbox was supposed to be still); a sparse file keeps
 * its holes (a sparse map: the holes are neither read nor stored). */
static int
write_file (struct packer *p, int fd, const struct stat *st, csr_error **err)
{
  static struct region r[MAX_REGIONS];
  ssize_t sn = data_regions (fd, st->st_size, r);
  bool sparse = sn >= 0;
  size_t n = sparse ? (size_t)sn : 0;
  for (size_t i = 0; i < n; i++)
    csr_la.archive_entry_sparse_add_entry (p->e, r[i].off, r[i].len);
  /* A hole at the end: an empty region there ends the map. */
  if (sparse && (n == 0 || r[n - 1].off + r[n - 1].len < st->st_size))
    csr_la.archive_entry_sparse_add_entry (p->e, st->st_size, 0);
  if (write_header (p, st, err) < 0)
    return -1;
  off_t pos = 0;
  for (size_t i = 0; i < n; i++)
    {
      if (feed (p, -1, pos, (uint64_t)(r[i].off - pos), err) < 0
          || feed (p, fd, r[i].off, (uint64_t)r[i].len, err) < 0)
        return -1;
      pos = r[i].off + r[i].len;
    }
  if (feed (p, sparse ? -1 : fd, pos, (uint64_t)(st->st_size - pos), err) < 0)
    return -1;
  p->st->bytes += (uint64_t)st->st_size;
  p->st->sparse += sparse;
  return 0;
}

static int pack_dir (struct packer *p, int dfd, size_t len, int depth, csr_error **err);

/* One entry NAME of the directory DFD; p->path (LEN bytes) is its name in
 * the archive. */
static int
pack_entry (struct packer *p, int dfd, const char *name, size_t len, int depth, csr_error **err)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return csr_error_errno (err, "stat %s", p->path);
    }
  csr_la.archive_entry_clear (p->e);
  bool opaque = false;
  char proc[64 + NAME_MAX];
  snprintf (proc, sizeof proc, "/proc/self/fd/%d/%s", dfd, name);
  if (S_ISDIR (st.st_mode))
    {
      cleanup_close int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          csr_ckpt_stats_note (p->st, "%s: unreadable directory (%s)", p->path, strerror (errno));
          return 0;
        }
      if (add_xattrs (p, fd, NULL, &opaque, err) < 0 || write_header (p, &st, err) < 0)
        return -1;
      p->st->dirs++;
      p->st->opaque += opaque;
      return pack_dir (p, fd, len, depth + 1, err);
    }
  if (S_ISREG (st.st_mode))
    {
      cleanup_close int fd
          = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        {
          csr_ckpt_stats_note (p->st, "%s: unreadable file (%s)", p->path, strerror (errno));
          return 0;
        }
      if (st.st_nlink > 1)
        {
          struct inode_key key = { st.st_dev, st.st_ino, NULL };
          struct inode_key **seen = tfind (&key, &p->inodes, cmp_inode);
          if (seen)
            {
              csr_la.archive_entry_set_hardlink (p->e, (*seen)->path);
              csr_la.archive_entry_set_size (p->e, 0);
              p->st->hardlinks++;
              return write_header (p, &st, err);
            }
          struct inode_key *k = calloc (1, sizeof *k);
          if (k)
            *k = (struct inode_key){ st.st_dev, st.st_ino, strdup (p->path) };
          if (k == NULL || k->path == NULL || tsearch (k, &p->inodes, cmp_inode) == NULL)
            {
              if (k)
                free (k->path);
              free (k);
              return csr_error_set (err, ENOMEM, "checkpoint");
            }
        }
      csr_la.archive_entry_set_size (p->e, st.st_size);
      if (add_xattrs (p, fd, NULL, &opaque, err) < 0 || write_file (p, fd, &st, err) < 0)
        return -1;
      p->st->files++;
      return 0;
    }
  if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (dfd, name, target, sizeof target - 1);
      if (n < 0)
        return csr_error_errno (err, "read the link %s", p->path);
      target[n] = '\0';
      csr_la.archive_entry_set_symlink (p->e, target);
      p->st->symlinks++;
    }
  else if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0))
    {
      csr_la.archive_entry_set_rdev (p->e, 0);
      p->st->whiteouts++;
    }
  else if (S_ISFIFO (st.st_mode))
    p->st->fifos++;
  else
    {
      csr_ckpt_stats_note (p->st, "%s: %s", p->path,
                           S_ISSOCK (st.st_mode) ? "a socket" : "a device node");
      return 0;
    }
  if (add_xattrs (p, -1, proc, &opaque, err) < 0)
    return -1;
  return write_header (p, &st, err);
}

static int
cmp_name (const void *a, const void *b)
{
  return strcmp (*(char *const *)a, *(char *const *)b);
}

/* The entries of the directory DFD (sorted: the same layer gives the same
 * archive); p->path (LEN bytes) is its name in the archive. */
static int
pack_dir (struct packer *p, int dfd, size_t len, int depth, csr_error **err)
{
  if (depth > MAX_DEPTH)
    return csr_error_set (err, ELOOP, "%s: directories nested deeper than %d levels", p->path,
                          MAX_DEPTH);
  DIR *d = csr_fdopendir_or_close (fcntl (dfd, F_DUPFD_CLOEXEC, 3));
  if (d == NULL)
    return csr_error_errno (err, "read the directory %s", p->path);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  int rc = 0;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (n == cap)
        {
          cap = cap ? cap * 2 : 32;
          char **nv = realloc (names, cap * sizeof *nv);
          if (nv == NULL)
            {
              rc = csr_error_set (err, ENOMEM, "checkpoint");
              break;
            }
          names = nv;
        }
      if ((names[n] = strdup (de->d_name)) == NULL)
        {
          rc = csr_error_set (err, ENOMEM, "checkpoint");
          break;
        }
      n++;
    }
  if (rc == 0 && errno != 0)
    rc = csr_error_errno (err, "read the directory %s", p->path);
  closedir (d);
  if (n)
    qsort (names, n, sizeof *names, cmp_name);
  for (size_t i = 0; i < n && rc == 0; i++)
    {
      size_t nl = strlen (names[i]);
      if (len + 1 + nl >= PATH_MAX)
        {
          rc = csr_error_set (err, ENAMETOOLONG, "%s/%s: path too long", p->path, names[i]);
          break;
        }
      p->path[len] = '/';
      memcpy (p->path + len + 1, names[i], nl + 1);
      rc = pack_entry (p, dfd, names[i], len + 1 + nl, depth, err);
      p->path[len] = '\0';
    }
  for (size_t i = 0; i < n; i++)
    free (names[i]);
  free (names);
  return rc;
}

static int
pack_spec (struct packer *p, const char *spec_json, csr_error **err)
{
  size_t len = strlen (spec_json);
  csr_la.archive_entry_clear (p->e);
  csr_la.archive_entry_set_pathname (p->e, "spec.json");
  csr_la.archive_entry_set_filetype (p->e, AE_IFREG);
  csr_la.archive_entry_set_perm (p->e, 0600);
  csr_la.archive_entry_set_size (p->e, (la_int64_t)len);
  csr_la.archive_entry_set_mtime (p->e, time (NULL), 0);
  if (csr_la.archive_write_header (p->a, p->e) < ARCHIVE_WARN
      || csr_la.archive_write_data (p->a, spec_json, len) != (la_ssize_t)len)
    return la_fail (p, "spec.json", err);
  return 0;
}

/* Each session's save as sessions/NAME (0600, owned by the sandbox's root):
 * exactly the size its file has. */
static int
pack_sessions (struct packer *p, const struct csr_ckpt_session_file *ss, size_t n, csr_error **err)
{
  time_t now = time (NULL);
  for (size_t i = 0; i < n; i++)
    {
      struct stat st;
      snprintf (p->path, sizeof p->path, "sessions/%s", ss[i].name);
      if (fstat (ss[i].fd, &st) < 0 || !S_ISREG (st.st_mode))
        return csr_error_set (err, EINVAL, "%s: not a file", p->path);
      if ((uint64_t)st.st_size > CSR_CKPT_SESSION_MAX)
        return csr_error_set (err, EFBIG, "%s: larger than %llu bytes", p->path,
                              (unsigned long long)CSR_CKPT_SESSION_MAX);
      csr_la.archive_entry_clear (p->e);
      csr_la.archive_entry_set_pathname (p->e, p->path);
      csr_la.archive_entry_set_filetype (p->e, AE_IFREG);
      csr_la.archive_entry_set_perm (p->e, 0600);
      csr_la.archive_entry_set_size (p->e, st.st_size);
      csr_la.archive_entry_set_mtime (p->e, now, 0);
      if (csr_la.archive_write_header (p->a, p->e) < ARCHIVE_WARN)
        return la_fail (p, p->path, err);
      if (feed (p, ss[i].fd, 0, (uint64_t)st.st_size, err) < 0)
        return -1;
    }
  return 0;
}

int
csr_ckpt_pack (int upperfd, int out_fd, const char *spec_json,
               const struct csr_ckpt_session_file *sessions, size_t n_sessions,
               struct csr_ckpt_stats *st, csr_error **err)
{
  if (csr_la_load (err) < 0)
    return -1;
  struct packer p = { .out_fd = out_fd, .st = st };
  csr_sha256_init_fast (&p.sha);
  cleanup_free char *buf = p.buf = malloc (DATA_CHUNK);
  cleanup_la_write struct archive *a = p.a = csr_la.archive_write_new ();
  p.e = csr_la.archive_entry_new ();
  int rc = -1;
  if (buf == NULL || a == NULL || p.e == NULL)
    {
      csr_error_set (err, ENOMEM, "checkpoint");
      goto out;
    }
  if (csr_la.archive_write_add_filter_zstd (a) != ARCHIVE_OK
      || csr_la.archive_write_set_format_pax (a) != ARCHIVE_OK
      /* Extended attributes as SCHILY.xattr only (GNU tar reads them too). */
      || csr_la.archive_write_set_format_option (a, "pax", "xattrheader", "SCHILY") != ARCHIVE_OK
      || csr_la.archive_write_set_bytes_per_block (a, OUT_BLOCK) != ARCHIVE_OK
      || csr_la.archive_write_set_bytes_in_last_block (a, 1) != ARCHIVE_OK
      || csr_la.archive_write_open (a, &p, NULL, write_cb, NULL) != ARCHIVE_OK)
    {
      la_fail (&p, "set up zstd and tar", err);
      goto out;
    }
  struct stat ust;
  if (fstat (upperfd, &ust) < 0 || !S_ISDIR (ust.st_mode))
    {
      csr_error_set (err, ENOTDIR, "the layer is not a directory");
      goto out;
    }
  if (pack_spec (&p, spec_json, err) < 0)
    goto out;
  strcpy (p.path, "upper");
  csr_la.archive_entry_clear (p.e);
  bool opaque = false;
  if (add_xattrs (&p, upperfd, NULL, &opaque, err) < 0 || write_header (&p, &ust, err) < 0)
    goto out;
  st->dirs++;
  if (pack_dir (&p, upperfd, strlen (p.path), 1, err) < 0)
    goto out;
  if (pack_sessions (&p, sessions, n_sessions, err) < 0)
    goto out;
  if (csr_la.archive_write_close (a) != ARCHIVE_OK)
    {
      la_fail (&p, "finish", err);
      goto out;
    }
  if (fsync (out_fd) < 0)
    {
      csr_error_errno (err, "sync the checkpoint");
      goto out;
    }
  st->archive_bytes = p.written;
  rc = 0;
out:
  if (csr_sha256_final (&p.sha, st->sha256) < 0 && rc == 0)
    rc = csr_error_set (err, 0, "sha256: libcrypto failed");
  if (p.e)
    csr_la.archive_entry_free (p.e);
  tdestroy (p.inodes, free_inode);
  return rc;
}
