/* csrun — sandbox files: trees to and from tar streams (files-tar.h). */
#include "config.h"
#include "files-tar.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/pack.h"

#define la csr_la
#define BLOCK (64 * 1024)

/* ------------------------------------------------------------ handles */

struct archive *
csr_ftar_reader (int fd, csr_error **err)
{
  struct archive *a = la.archive_read_new ();
  if (a == NULL)
    {
      csr_error_set (err, ENOMEM, "libarchive: a reader");
      return NULL;
    }
  /* Tar only, and the decompressors libarchive has built in (an external
   * program would fail anyway: the worker may not exec). */
  la.archive_read_support_format_tar (a);
  la.archive_read_support_format_empty (a);
  la.archive_read_support_filter_none (a);
  la.archive_read_support_filter_gzip (a);
  la.archive_read_support_filter_bzip2 (a);
  la.archive_read_support_filter_xz (a);
  la.archive_read_support_filter_zstd (a);
  if (la.archive_read_open_fd (a, fd, BLOCK) != ARCHIVE_OK)
    {
      csr_error_set (err, csr_ftar_errno (a), "not a tar archive (%s)",
                     la.archive_error_string (a));
      la.archive_read_free (a);
      return NULL;
    }
  return a;
}

struct archive *
csr_ftar_writer (int fd, csr_error **err)
{
  struct archive *a = la.archive_write_new ();
  if (a == NULL)
    {
      csr_error_set (err, ENOMEM, "libarchive: a writer");
      return NULL;
    }
  if (la.archive_write_set_format_pax_restricted (a) != ARCHIVE_OK
      || la.archive_write_add_filter_none (a) != ARCHIVE_OK
      || la.archive_write_open_fd (a, fd) != ARCHIVE_OK)
    {
      csr_error_set (err, 0, "write a tar: %s", la.archive_error_string (a));
      la.archive_write_free (a);
      return NULL;
    }
  return a;
}

int
csr_ftar_writer_close (struct archive *a, csr_error **err)
{
  int rc = la.archive_write_close (a);
  if (rc != ARCHIVE_OK)
    csr_error_set (err, csr_ftar_errno (a), "write the tar: %s", la.archive_error_string (a));
  la.archive_write_free (a);
  return rc == ARCHIVE_OK ? 0 : -1;
}

int
csr_ftar_errno (struct archive *a)
{
  int e = la.archive_errno (a);
  /* libarchive's own codes (a bad format: EILSEQ, a misuse: EINVAL, "misc":
   * -1) are no system error: its message says it all. */
  return e > 0 && e != EILSEQ && e != EINVAL ? e : 0;
}

static int
tar_error (struct archive *a, csr_error **err, const char *what, const char *name)
{
  return csr_error_set (err, csr_ftar_errno (a), "%s%s%s: %s", what, name ? " " : "",
                        name ? name : "", la.archive_error_string (a));
}

static int
note (struct csr_files_notes *n, const char *path, const char *reason, csr_error **err)
{
  if (csr_files_note_add (n, path, reason) < 0)
    return csr_error_set (err, ENOMEM, "note %s", path);
  return 0;
}

static int
note_errno (struct csr_files_notes *n, const char *path, const char *what, int e, csr_error **err)
{
  char why[256];
  snprintf (why, sizeof why, "%s: %s", what, strerror (e));
  return note (n, path, why, err);
}

/* ------------------------------------------------------------ temporary files */

/* The temporary file being made, for csr_ftar_tmp_remove (a signal
 * handler's): registered and cleared with SIGTERM blocked. */
static struct
{
  volatile sig_atomic_t set;
  int dirfd;
  char name[CSR_TMP_NAME_MAX];
} cur_tmp;

static void
guard (int how)
{
  sigset_t s;
  sigemptyset (&s);
  sigaddset (&s, SIGTERM);
  sigprocmask (how, &s, NULL);
}

int
csr_ftar_tmp_create (int dirfd, mode_t mode, char name[CSR_TMP_NAME_MAX], csr_error **err)
{
  guard (SIG_BLOCK);
  int fd = csr_tmp_create_at (dirfd, mode, name, err);
  if (fd >= 0)
    {
      cur_tmp.dirfd = dirfd;
      memcpy (cur_tmp.name, name, CSR_TMP_NAME_MAX);
      cur_tmp.set = 1;
    }
  guard (SIG_UNBLOCK);
  return fd;
}

int
csr_ftar_tmp_commit (int dirfd, const char *name, int fd, const char *leaf, csr_error **err)
{
  guard (SIG_BLOCK);
  int rc = csr_tmp_commit_at (dirfd, name, fd, leaf, err);
  cur_tmp.set = 0;
  guard (SIG_UNBLOCK);
  return rc;
}

void
csr_ftar_tmp_abort (int dirfd, const char *name, int fd)
{
  guard (SIG_BLOCK);
  close (fd);
  unlinkat (dirfd, name, 0);
  cur_tmp.set = 0;
  guard (SIG_UNBLOCK);
}

void
csr_ftar_tmp_remove (void)
{
  if (cur_tmp.set)
    unlinkat (cur_tmp.dirfd, cur_tmp.name, 0);
}

/* ------------------------------------------------------------ walking */

struct walk
{
  csr_ftar_visit_fn visit;
  void *ctx;
  const struct csr_files_limits *lim;
  struct csr_files_stats *st;
  dev_t dev;
  char rel[CSR_FILES_PATH_MAX];
};

static int
count_entry (struct walk *w, csr_error **err)
{
  if (w->st->entries >= w->lim->max_entries)
    return csr_error_set (err, E2BIG, "more than %llu entries (--max-entries)",
                          (unsigned long long)w->lim->max_entries);
  w->st->entries++;
  return 0;
}

static int walk_dir (struct walk *w, int fd, size_t rel_len, int depth, csr_error **err);

/* Go into the directory NAME of DIRFD (REL in w->rel) when it may be. */
static int
enter (struct walk *w, int dirfd, const char *name, const struct stat *s, size_t rel_len, int depth,
       csr_error **err)
{
  if (depth >= CSR_FILES_MAX_DEPTH)
    return note (&w->st->skipped, w->rel, "nested too deep (not entered)", err);
  if (s->st_dev != w->dev)
    return note (&w->st->skipped, w->rel, "another file system (not entered)", err);
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return note_errno (&w->st->skipped, w->rel, "unreadable", errno, err);
  return walk_dir (w, fd, rel_len, depth + 1, err);
}

/* The entries of the directory FD (taken), whose path is w->rel[0..REL_LEN). */
static int
walk_dir (struct walk *w, int fd, size_t rel_len, int depth, csr_error **err)
{
  cleanup_dir DIR *d = csr_fdopendir_or_close (fd);
  if (d == NULL)
    return note_errno (&w->st->skipped, w->rel, "unreadable", errno, err);
  for (;;)
    {
      errno = 0;
      struct dirent *de = readdir (d);
      if (de == NULL)
        {
          if (errno != 0)
            return note_errno (&w->st->skipped, w->rel, "unreadable", errno, err);
          return 0;
        }
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      size_t nl = strlen (name), len = rel_len + (rel_len > 0) + nl;
      if (len >= sizeof w->rel)
        {
          w->rel[rel_len] = '\0';
          if (note (&w->st->skipped, w->rel, "a path below it is too long", err) < 0)
            return -1;
          continue;
        }
      if (rel_len > 0)
        w->rel[rel_len] = '/';
      memcpy (w->rel + rel_len + (rel_len > 0), name, nl + 1);
      struct stat s;
      if (fstatat (dirfd (d), name, &s, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno != ENOENT && note_errno (&w->st->skipped, w->rel, "stat", errno, err) < 0)
            return -1;
          continue;
        }
      if (count_entry (w, err) < 0)
        return -1;
      int r = w->visit (w->ctx, dirfd (d), name, w->rel, &s, err);
      if (r < 0)
        return -1;
      if (r > 0 && S_ISDIR (s.st_mode) && enter (w, dirfd (d), name, &s, len, depth, err) < 0)
        return -1;
    }
}

int
csr_ftar_walk (int dirfd, const char *name, const char *top_rel, csr_ftar_visit_fn visit, void *ctx,
               const struct csr_files_limits *lim, struct csr_files_stats *st, csr_error **err)
{
  cleanup_free struct walk *w = calloc (1, sizeof *w);
  if (w == NULL)
    return csr_error_set (err, ENOMEM, "walk");
  *w = (struct walk){ visit, ctx, lim, st, 0, "" };
  size_t len = strlen (top_rel);
  if (len >= sizeof w->rel)
    return csr_error_set (err, ENAMETOOLONG, "%s: name too long", top_rel);
  memcpy (w->rel, top_rel, len + 1);
  struct stat s;
  if (fstatat (dirfd, name, &s, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "stat");
  w->dev = s.st_dev;
  if (count_entry (w, err) < 0)
    return -1;
  int r = visit (ctx, dirfd, name, w->rel, &s, err);
  if (r < 0)
    return -1;
  if (r > 0 && S_ISDIR (s.st_mode))
    {
      int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return csr_error_errno (err, "open the directory");
      return walk_dir (w, fd, len, 0, err);
    }
  return 0;
}

/* ------------------------------------------------------------ packing */

struct pack
{
  struct archive *a;
  struct archive_entry *e;
  const struct csr_files_limits *lim;
  struct csr_files_stats *st;
  char buf[BLOCK];
};

static int
put_header (struct pack *p, const char *rel, csr_error **err)
{
  int rc = la.archive_write_header (p->a, p->e);
  /* ARCHIVE_WARN: a name that is not in the locale's charset, written as
   * it is (binary). */
  if (rc < ARCHIVE_WARN)
    return tar_error (p->a, err, "write the tar at", rel);
  return 0;
}

/* The data of the regular file NAME: at most the size its header gives
 * (a file that shrank meanwhile is padded with zeros by libarchive). */
static int
put_data (struct pack *p, int fd, uint64_t size, const char *rel, csr_error **err)
{
  while (size > 0)
    {
      ssize_t r = read (fd, p->buf, size < sizeof p->buf ? (size_t)size : sizeof p->buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "read %s", rel);
      if (r == 0)
        break;
      if (la.archive_write_data (p->a, p->buf, (size_t)r) != r)
        return tar_error (p->a, err, "write the tar at", rel);
      size -= (uint64_t)r;
    }
  return 0;
}

static int
pack_file (struct pack *p, int dirfd, const char *name, const char *rel, const struct stat *s,
           csr_error **err)
{
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat fs;
  if (fd < 0)
    return note_errno (&p->st->skipped, rel, "unreadable", errno, err);
  if (fstat (fd, &fs) < 0 || !S_ISREG (fs.st_mode) || fs.st_ino != s->st_ino
      || fs.st_dev != s->st_dev)
    return note (&p->st->skipped, rel, "changed while it was copied (not copied)", err);
  uint64_t size = (uint64_t)fs.st_size;
  if (p->st->bytes + size > p->lim->max_bytes)
    return csr_error_set (err, EFBIG, "more than %llu bytes (--max-size) with %s",
                          (unsigned long long)p->lim->max_bytes, rel);
  la.archive_entry_set_filetype (p->e, AE_IFREG);
  la.archive_entry_set_size (p->e, (la_int64_t)size);
  if (put_header (p, rel, err) < 0 || put_data (p, fd, size, rel, err) < 0)
    return -1;
  p->st->files++;
  p->st->bytes += size;
  return 0;
}

static int
pack_visit (void *ctx, int dirfd, const char *name, const char *rel, const struct stat *s,
            csr_error **err)
{
  struct pack *p = ctx;
  la.archive_entry_clear (p->e);
  la.archive_entry_copy_pathname (p->e, rel);
  la.archive_entry_set_perm (p->e, s->st_mode & 07777);
  la.archive_entry_set_mtime (p->e, s->st_mtim.tv_sec, s->st_mtim.tv_nsec);
  la.archive_entry_set_uid (p->e, 0);
  la.archive_entry_set_gid (p->e, 0);
  switch (s->st_mode & S_IFMT)
    {
    case S_IFDIR:
      la.archive_entry_set_filetype (p->e, AE_IFDIR);
      la.archive_entry_set_size (p->e, 0);
      if (put_header (p, rel, err) < 0)
        return -1;
      p->st->dirs++;
      return 1;
    case S_IFREG:
      return pack_file (p, dirfd, name, rel, s, err);
    case S_IFLNK:
      {
        char target[CSR_FILES_PATH_MAX];
        ssize_t n = readlinkat (dirfd, name, target, sizeof target);
        if (n < 0)
          return note_errno (&p->st->skipped, rel, "unreadable", errno, err);
        if ((size_t)n >= sizeof target)
          return note (&p->st->skipped, rel, "a symlink with a target too long", err);
        target[n] = '\0';
        la.archive_entry_set_filetype (p->e, AE_IFLNK);
        la.archive_entry_set_size (p->e, 0);
        la.archive_entry_copy_symlink (p->e, target);
        if (put_header (p, rel, err) < 0)
          return -1;
        p->st->symlinks++;
        return 0;
      }
    default:
      return note (&p->st->skipped, rel, "a fifo, socket or device (not copied)", err);
    }
}

int
csr_ftar_pack (struct archive *a, int dirfd, const char *name, const char *arcname,
               const struct csr_files_limits *lim, struct csr_files_stats *st, csr_error **err)
{
  cleanup_free struct pack *p = malloc (sizeof *p);
  if (p == NULL)
    return csr_error_set (err, ENOMEM, "pack");
  p->a = a;
  p->lim = lim;
  p->st = st;
  p->e = la.archive_entry_new ();
  if (p->e == NULL)
    return csr_error_set (err, ENOMEM, "pack");
  int rc = csr_ftar_walk (dirfd, name, arcname, pack_visit, p, lim, st, err);
  la.archive_entry_free (p->e);
  return rc;
}

/* The first component of a tar's first entry: the top of the tree it
 * holds ("." for the contents of a root). */
int
csr_ftar_top (struct archive_entry *e, char top[CSR_FILES_PATH_MAX], csr_error **err)
{
  const char *raw = la.archive_entry_pathname (e);
  if (raw == NULL)
    raw = la.archive_entry_pathname_utf8 (e);
  int why = csr_files_entry_name (raw, top, CSR_FILES_PATH_MAX);
  if (why)
    return csr_error_set (err, 0, "%s: %s", raw ? raw : "?", csr_files_name_reason (why));
  char *slash = strchr (top, '/');
  if (slash)
    *slash = '\0';
  if (top[0] == '\0')
    strcpy (top, ".");
  return 0;
}

/* ------------------------------------------------------------ extracting */

/* A regular file this extraction made (the only targets of hardlinks). */
struct made
{
  char *path;
  dev_t dev;
  ino_t ino;
};

static int
made_cmp (const void *a, const void *b)
{
  return strcmp (((const struct made *)a)->path, ((const struct made *)b)->path);
}

static void
made_free (void *p)
{
  struct made *m = p;
  free (m->path);
  free (m);
}

/* A directory this extraction made: its mode and mtime are set at the end. */
struct dir_fix
{
  char *path;
  mode_t mode;
  struct timespec mtime;
};

struct unpack
{
  struct archive *a;
  const struct csr_ftar_dest *d;
  const struct csr_files_limits *lim;
  struct csr_files_stats *st;
  void *made;
  struct dir_fix *dirs;
  size_t n_dirs, cap_dirs;
  const char *raw; /* the entry's name as the tar has it */
  bool top_entry;  /* the entry is the top of the tree */
  int link_fd;     /* a hardlink's target: its directory and name */
  const char *link_leaf;
  char name[CSR_FILES_PATH_MAX]; /* its clean name below basefd */
  char tmp[CSR_FILES_PATH_MAX];
  char buf[BLOCK];
};

/* An entry refused: noted, its data skipped; fatal for the top of a tree
 * (nothing else could go below it). */
static int
refuse (struct unpack *u, const char *reason, csr_error **err)
{
  if (u->top_entry)
    return csr_error_set (err, 0, "%s: %s", u->raw, reason);
  if (note (&u->st->refused, u->raw, reason, err) < 0)
    return -1;
  if (la.archive_read_data_skip (u->a) < ARCHIVE_WARN)
    return tar_error (u->a, err, "read the tar at", u->raw);
  return 0;
}

/* NAME (the tar's, RAW) as a clean path below basefd in OUT: 0, 1 when
 * refused (*WHY says why), -1 on an error. */
static int
map_name (struct unpack *u, const char *raw, char *out, const char **why)
{
  int r = csr_files_entry_name (raw, out, CSR_FILES_PATH_MAX);
  if (r != 0)
    {
      *why = csr_files_name_reason (r);
      return 1;
    }
  const char *top = u->d->top;
  if (top == NULL || strcmp (top, ".") == 0)
    return 0;
  size_t tl = strlen (top);
  if (strncmp (out, top, tl) != 0 || (out[tl] != '\0' && out[tl] != '/'))
    {
      *why = "outside the copied tree (refused)";
      return 1;
    }
  const char *ren = u->d->rename;
  if (ren && strcmp (ren, top) != 0)
    {
      size_t rl = strlen (ren), rest = strlen (out + tl);
      if (rl + rest >= CSR_FILES_PATH_MAX)
        {
          *why = csr_files_name_reason (CSR_FILES_NAME_LONG);
          return 1;
        }
      memmove (out + rl, out + tl, rest + 1);
      memcpy (out, ren, rl);
    }
  return 0;
}

/* The directory that holds u->name (made when missing): an O_PATH fd and
 * *LEAF; -1 with *ERR, or -2 when the entry was refused. */
static int
parent_of (struct unpack *u, const char *name, bool mkdirs, const char **leaf, csr_error **err)
{
  csr_error *e = NULL;
  int fd = csr_beneath_parent (u->d->basefd, name, mkdirs, u->d->parent_mode, leaf, &e);
  if (fd >= 0)
    return fd;
  int s = e ? e->status : 0;
  if (s == ELOOP || s == ENOTDIR || s == EXDEV || s == ENAMETOOLONG || s == EINVAL)
    {
      csr_error_free (e);
      return refuse (u,
                     s == ELOOP ? "goes through a symbolic link (refused)"
                                : "goes through something that is not a directory (refused)",
                     err)
                     < 0
                 ? -1
                 : -2;
    }
  if (err && *err == NULL)
    *err = e;
  else
    csr_error_free (e);
  return -1;
}

static int
is_dir_at (int pfd, const char *leaf)
{
  struct stat s;
  return fstatat (pfd, leaf, &s, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (s.st_mode);
}

static int
make_dir (struct unpack *u, struct archive_entry *e, csr_error **err)
{
  if (u->name[0] == '\0')
    return 0; /* the base itself: left as it is */
  const char *leaf;
  cleanup_close int pfd = parent_of (u, u->name, true, &leaf, err);
  if (pfd < 0)
    return pfd == -2 ? 0 : -1;
  if (mkdirat (pfd, leaf, 0700) < 0)
    {
      if (errno == EEXIST && is_dir_at (pfd, leaf))
        return 0; /* merged into */
      if (errno == EEXIST)
        return refuse (u, "exists and is not a directory (refused)", err);
      return csr_error_errno (err, "mkdir %s", u->name);
    }
  if (u->n_dirs == u->cap_dirs)
    {
      size_t cap = u->cap_dirs ? u->cap_dirs * 2 : 64;
      struct dir_fix *v = realloc (u->dirs, cap * sizeof *v);
      if (v == NULL)
        return csr_error_set (err, ENOMEM, "extract");
      u->dirs = v;
      u->cap_dirs = cap;
    }
  struct dir_fix *f = &u->dirs[u->n_dirs];
  if ((f->path = strdup (u->name)) == NULL)
    return csr_error_set (err, ENOMEM, "extract");
  f->mode = (la.archive_entry_perm (e) & 01777) & ~u->d->umask;
  f->mtime = (struct timespec){ la.archive_entry_mtime (e), la.archive_entry_mtime_nsec (e) };
  u->n_dirs++;
  u->st->dirs++;
  return 0;
}

static int
copy_data (struct unpack *u, int fd, uint64_t *n, csr_error **err)
{
  for (;;)
    {
      la_ssize_t r = la.archive_read_data (u->a, u->buf, sizeof u->buf);
      if (r == 0)
        return 0;
      if (r < 0)
        return tar_error (u->a, err, "read the tar at", u->raw);
      if (u->st->bytes + *n + (uint64_t)r > u->lim->max_bytes)
        return csr_error_set (err, EFBIG, "more than %llu bytes (--max-size) with %s",
                              (unsigned long long)u->lim->max_bytes, u->raw);
      if (csr_write_all (fd, u->buf, (size_t)r, err) < 0)
        return csr_error_wrap (err, "%s", u->name);
      *n += (uint64_t)r;
    }
}

static int
remember (struct unpack *u, int fd, csr_error **err)
{
  struct stat s;
  if (fstat (fd, &s) < 0)
    return csr_error_errno (err, "stat %s", u->name);
  struct made *m = malloc (sizeof *m);
  if (m == NULL || (m->path = strdup (u->name)) == NULL)
    {
      free (m);
      return csr_error_set (err, ENOMEM, "extract");
    }
  m->dev = s.st_dev;
  m->ino = s.st_ino;
  struct made **slot = tsearch (m, &u->made, made_cmp);
  if (slot == NULL)
    {
      made_free (m);
      return csr_error_set (err, ENOMEM, "extract");
    }
  if (*slot != m)
    {
      /* The same name again (a later entry replaced it). */
      (*slot)->dev = m->dev;
      (*slot)->ino = m->ino;
      made_free (m);
    }
  return 0;
}

static int
make_file (struct unpack *u, struct archive_entry *e, csr_error **err)
{
  uint64_t declared = la.archive_entry_size_is_set (e) && la.archive_entry_size (e) > 0
                          ? (uint64_t)la.archive_entry_size (e)
                          : 0;
  if (u->st->bytes + declared > u->lim->max_bytes)
    return csr_error_set (err, EFBIG, "more than %llu bytes (--max-size) with %s",
                          (unsigned long long)u->lim->max_bytes, u->raw);
  if (u->name[0] == '\0')
    return refuse (u, "a file where the destination directory is (refused)", err);
  const char *leaf;
  cleanup_close int pfd = parent_of (u, u->name, true, &leaf, err);
  if (pfd < 0)
    return pfd == -2 ? 0 : -1;
  if (is_dir_at (pfd, leaf))
    return refuse (u, "a directory is in the way (refused)", err);
  char tmp[CSR_TMP_NAME_MAX];
  int fd = csr_ftar_tmp_create (pfd, 0600, tmp, err);
  if (fd < 0)
    return csr_error_wrap (err, "%s", u->name);
  uint64_t n = 0;
  mode_t mode = (la.archive_entry_perm (e) & 0777) & ~u->d->umask;
  struct timespec ts[2] = { { la.archive_entry_mtime (e), la.archive_entry_mtime_nsec (e) } };
  ts[1] = ts[0];
  if (copy_data (u, fd, &n, err) < 0 || fchmod (fd, mode) < 0 || futimens (fd, ts) < 0
      || remember (u, fd, err) < 0)
    {
      if (err && *err == NULL)
        csr_error_errno (err, "%s", u->name);
      csr_ftar_tmp_abort (pfd, tmp, fd);
      return -1;
    }
  if (csr_ftar_tmp_commit (pfd, tmp, fd, leaf, err) < 0)
    return csr_error_wrap (err, "%s", u->name);
  u->st->files++;
  u->st->bytes += n;
  return 0;
}

/* Make NAME with MAKE (a temporary name first), then rename it over LEAF. */
static int
make_renamed (struct unpack *u, int pfd, const char *leaf,
              int (*make) (struct unpack *u, int pfd, const char *tmp), csr_error **err)
{
  char tmp[CSR_TMP_NAME_MAX];
  int rc = -1;
  /* Short: SIGTERM waits until the name is final (or gone). */
  guard (SIG_BLOCK);
  for (int tries = 0; tries < 16 && rc < 0; tries++)
    {
      csr_tmp_name (tmp);
      rc = make (u, pfd, tmp);
      if (rc < 0 && errno != EEXIST)
        break;
    }
  if (rc < 0)
    csr_error_errno (err, "%s", u->name);
  else if (renameat (pfd, tmp, pfd, leaf) < 0)
    {
      rc = csr_error_errno (err, "%s: rename", u->name);
      unlinkat (pfd, tmp, 0);
    }
  guard (SIG_UNBLOCK);
  return rc < 0 ? -1 : 0;
}

static int
mk_symlink (struct unpack *u, int pfd, const char *tmp)
{
  return symlinkat (u->tmp, pfd, tmp);
}

static int
make_symlink (struct unpack *u, struct archive_entry *e, csr_error **err)
{
  const char *target = la.archive_entry_symlink (e);
  if (target == NULL)
    target = la.archive_entry_symlink_utf8 (e);
  if (target == NULL || *target == '\0' || strlen (target) >= sizeof u->tmp)
    return refuse (u, "a symlink without a usable target (refused)", err);
  if (u->name[0] == '\0')
    return refuse (u, "a symlink where the destination directory is (refused)", err);
  const char *leaf;
  cleanup_close int pfd = parent_of (u, u->name, true, &leaf, err);
  if (pfd < 0)
    return pfd == -2 ? 0 : -1;
  if (is_dir_at (pfd, leaf))
    return refuse (u, "a directory is in the way (refused)", err);
  snprintf (u->tmp, sizeof u->tmp, "%s", target);
  if (make_renamed (u, pfd, leaf, mk_symlink, err) < 0)
    return -1;
  struct timespec ts[2] = { { la.archive_entry_mtime (e), la.archive_entry_mtime_nsec (e) } };
  ts[1] = ts[0];
  (void)utimensat (pfd, leaf, ts, AT_SYMLINK_NOFOLLOW); /* cosmetic */
  u->st->symlinks++;
  return 0;
}

static int
mk_link (struct unpack *u, int pfd, const char *tmp)
{
  return linkat (u->link_fd, u->link_leaf, pfd, tmp, 0);
}

static int
make_hardlink (struct unpack *u, const char *target, csr_error **err)
{
  const char *why;
  int r = map_name (u, target, u->tmp, &why);
  if (r > 0)
    return refuse (u, "a hardlink whose target leaves the copied tree (refused)", err);
  struct made key = { u->tmp, 0, 0 };
  struct made **m = tfind (&key, &u->made, made_cmp);
  if (m == NULL)
    return refuse (u, "a hardlink to a file this copy did not make (refused)", err);
  if (u->name[0] == '\0')
    return refuse (u, "a hardlink where the destination directory is (refused)", err);
  const char *tleaf, *leaf;
  cleanup_close int tfd = parent_of (u, u->tmp, false, &tleaf, err);
  if (tfd < 0)
    return tfd == -2 ? 0 : -1;
  struct stat s;
  if (fstatat (tfd, tleaf, &s, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (s.st_mode)
      || s.st_dev != (*m)->dev || s.st_ino != (*m)->ino)
    return refuse (u, "a hardlink to a file that changed since this copy made it (refused)", err);
  cleanup_close int pfd = parent_of (u, u->name, true, &leaf, err);
  if (pfd < 0)
    return pfd == -2 ? 0 : -1;
  if (is_dir_at (pfd, leaf))
    return refuse (u, "a directory is in the way (refused)", err);
  u->link_fd = tfd;
  u->link_leaf = tleaf;
  if (make_renamed (u, pfd, leaf, mk_link, err) < 0)
    return -1;
  u->st->hardlinks++;
  return la.archive_read_data_skip (u->a) < ARCHIVE_WARN
             ? tar_error (u->a, err, "read the tar at", u->raw)
             : 0;
}

static int
one_entry (struct unpack *u, struct archive_entry *e, csr_error **err)
{
  u->raw = la.archive_entry_pathname (e);
  if (u->raw == NULL)
    u->raw = la.archive_entry_pathname_utf8 (e);
  if (u->st->entries >= u->lim->max_entries)
    return csr_error_set (err, E2BIG, "more than %llu entries (--max-entries)",
                          (unsigned long long)u->lim->max_entries);
  u->st->entries++;
  const char *why;
  if (map_name (u, u->raw ? u->raw : "", u->name, &why) > 0)
    {
      if (u->raw == NULL)
        u->raw = "?";
      return refuse (u, why, err);
    }
  const char *ren = u->d->rename ? u->d->rename : u->d->top;
  u->top_entry = ren && strcmp (u->name, ren) == 0;
  const char *hl = la.archive_entry_hardlink (e);
  if (hl == NULL)
    hl = la.archive_entry_hardlink_utf8 (e);
  if (hl)
    return make_hardlink (u, hl, err);
  switch (la.archive_entry_filetype (e))
    {
    case AE_IFDIR:
      return make_dir (u, e, err);
    case AE_IFREG:
      return make_file (u, e, err);
    case AE_IFLNK:
      return make_symlink (u, e, err);
    case AE_IFCHR:
    case AE_IFBLK:
      return refuse (u, "a device node (refused)", err);
    case AE_IFIFO:
      return refuse (u, "a fifo (refused)", err);
    case AE_IFSOCK:
      return refuse (u, "a socket (refused)", err);
    default:
      return refuse (u, "an entry of an unknown type (refused)", err);
    }
}

/* The directories made: their modes and mtimes, now that nothing more goes
 * into them (the deepest first).  One that is gone or replaced meanwhile is
 * left. */
static int
fix_dirs (struct unpack *u, csr_error **err)
{
  for (size_t i = u->n_dirs; i-- > 0;)
    {
      struct dir_fix *f = &u->dirs[i];
      const char *leaf;
      csr_error *e = NULL;
      cleanup_close int pfd = csr_beneath_parent (u->d->basefd, f->path, false, 0, &leaf, &e);
      csr_error_free (e);
      if (pfd < 0)
        continue;
      cleanup_close int fd = openat (pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        continue;
      struct timespec ts[2] = { f->mtime, f->mtime };
      if (fchmod (fd, f->mode) < 0 || futimens (fd, ts) < 0)
        return csr_error_errno (err, "%s: set its mode and time", f->path);
    }
  return 0;
}

int
csr_ftar_unpack (struct archive *a, struct archive_entry *first, const struct csr_ftar_dest *d,
                 const struct csr_files_limits *lim, struct csr_files_stats *st, csr_error **err)
{
  struct unpack *u = calloc (1, sizeof *u);
  if (u == NULL)
    return csr_error_set (err, ENOMEM, "extract");
  u->a = a;
  u->d = d;
  u->lim = lim;
  u->st = st;
  int rc = 0;
  struct archive_entry *e = first;
  while (rc == 0)
    {
      if (e == NULL)
        {
          int r = la.archive_read_next_header (a, &e);
          if (r == ARCHIVE_EOF)
            break;
          /* ARCHIVE_WARN: a name not in the locale's charset (kept as it
           * is), an odd extended header. */
          if (r < ARCHIVE_WARN)
            {
              rc = tar_error (a, err, "read the tar", NULL);
              break;
            }
        }
      rc = one_entry (u, e, err);
      e = NULL;
    }
  /* Even after an error: the directories made so far get their modes. */
  csr_error *fe = NULL;
  if (fix_dirs (u, rc < 0 ? &fe : err) < 0 && rc == 0)
    rc = -1;
  csr_error_free (fe);
  for (size_t i = 0; i < u->n_dirs; i++)
    free (u->dirs[i].path);
  free (u->dirs);
  tdestroy (u->made, made_free);
  free (u);
  return rc;
}
