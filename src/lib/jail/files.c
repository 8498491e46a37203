#include "config.h"
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/filearg.h"
#include "../util/pack.h"

#define MAX_DEPTH 64

/* What csrun itself wrote into the jail (snippet.py, the inputs): such a
 * file still with the same inode and change time at the end was not touched
 * by the snippet and is not delivered.  This process is the jail's init
 * later: the list lives on until the pack. */
struct written
{
  dev_t dev;
  ino_t ino;
  struct timespec ctime;
};
static struct written *written;
static size_t n_written, cap_written;

static void
note_stat (const struct stat *st)
{
  if (n_written == cap_written)
    {
      size_t cap = cap_written ? cap_written * 2 : 64;
      struct written *w = realloc (written, cap * sizeof *w);
      if (w == NULL)
        return; /* then it is delivered: harmless */
      written = w;
      cap_written = cap;
    }
  written[n_written++] = (struct written){ st->st_dev, st->st_ino, st->st_ctim };
}

void
csr_jail_note_written (const char *path)
{
  struct stat st;
  if (lstat (path, &st) == 0 && (S_ISREG (st.st_mode) || S_ISDIR (st.st_mode)))
    note_stat (&st);
}

static bool
untouched (const struct stat *st)
{
  for (size_t i = 0; i < n_written; i++)
    if (written[i].dev == st->st_dev && written[i].ino == st->st_ino
        && (S_ISDIR (st->st_mode) /* its entries may change: they are looked at one by one */
            || (written[i].ctime.tv_sec == st->st_ctim.tv_sec
                && written[i].ctime.tv_nsec == st->st_ctim.tv_nsec)))
      return true;
  return false;
}

void
csr_jail_outputs_reset (const struct jail_snippet *spec)
{
  if (spec->has_outputs)
    {
      if (ftruncate (spec->out_fd, 0) == 0)
        lseek (spec->out_fd, 0, SEEK_SET);
    }
}

/* ---------------------------------------------------------------- inputs */

static int
unpack_one (int rootfd, const struct jail_snippet *spec, const struct csr_pack_entry *e, int in,
            csr_error **err)
{
  const char *leaf;
  cleanup_close int pfd = csr_beneath_parent (rootfd, e->path, true, 0755, &leaf, err);
  if (pfd < 0)
    return -1;
  uid_t uid = spec->uid;
  gid_t gid = spec->gid;
  switch (e->type)
    {
    case CSR_PACK_DIR:
      if (mkdirat (pfd, leaf, 0700) < 0 && errno != EEXIST)
        return csr_error_errno (err, "mkdir /%s", e->path);
      {
        cleanup_close int d = openat (pfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d < 0)
          return csr_error_errno (err, "open /%s", e->path);
        if (fchown (d, uid, gid) < 0 || fchmod (d, e->mode & 0777) < 0)
          return csr_error_errno (err, "set the owner of /%s", e->path);
        struct stat st;
        if (fstat (d, &st) == 0)
          note_stat (&st);
      }
      return 0;
    case CSR_PACK_LNK:
      if (symlinkat (e->link, pfd, leaf) < 0)
        return csr_error_errno (err, "symlink /%s", e->path);
      if (fchownat (pfd, leaf, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        return csr_error_errno (err, "set the owner of /%s", e->path);
      return 0;
    case CSR_PACK_REG:
      {
        cleanup_close int fd
            = openat (pfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
          return csr_error_errno (err, "create /%s", e->path);
        if (csr_pack_copy (fd, in, e->size, NULL, err) < 0)
          return csr_error_wrap (err, "write /%s", e->path);
        if (fchown (fd, uid, gid) < 0 || fchmod (fd, e->mode & 0777) < 0)
          return csr_error_errno (err, "set the owner of /%s", e->path);
        struct stat st;
        if (fstat (fd, &st) == 0)
          note_stat (&st);
        int c = fd;
        fd = -1;
        if (close (c) < 0)
          return csr_error_errno (err, "close /%s", e->path);
        return 0;
      }
    default:
      return csr_error_set (err, EPROTO, "unexpected entry /%s in the inputs", e->path);
    }
}

int
csr_jail_unpack_inputs (const struct jail_snippet *spec, csr_error **err)
{
  if (!spec->has_inputs)
    return 0;
  int in = spec->in_fd;
  if (lseek (in, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "rewind the inputs");
  cleanup_close int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    return csr_error_errno (err, "open /");
  struct csr_pack_entry *e = malloc (sizeof *e);
  if (e == NULL)
    return csr_error_set (err, ENOMEM, "allocate");
  int rc;
  while ((rc = csr_pack_get (in, e, err)) > 0)
    if (unpack_one (rootfd, spec, e, in, err) < 0)
      {
        if (*err && (*err)->status == ENOSPC)
          csr_error_wrap (err, "the inputs do not fit in the jail (--tmp-size)");
        rc = -1;
        break;
      }
  free (e);
  close (in);
  if (rc < 0)
    return csr_error_wrap (err, "copy the --in inputs into the jail");
  return 0;
}

/* ---------------------------------------------------------------- outputs */

struct packer
{
  const struct jail_snippet *spec;
  int out;
  dev_t dev;
  uint64_t total;
  struct csr_pack_entry e;
};

static int
put_skip (struct packer *p, const char *rel, enum csr_pack_reason why, uint64_t size)
{
  p->e = (struct csr_pack_entry){ .type = CSR_PACK_SKIP, .reason = why, .size = size };
  snprintf (p->e.path, sizeof p->e.path, "%s", rel);
  return csr_pack_put (p->out, &p->e, NULL);
}

static int pack_tree (struct packer *p, int dfd, const char *rel, int depth);

static int
pack_entry (struct packer *p, int dfd, const char *name, const char *rel, int depth)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return put_skip (p, rel, CSR_SKIP_UNREADABLE, 0);
  const struct jail_snippet *s = p->spec;
  bool match = csr_out_glob_match (rel, s->out_globs, s->n_out_globs);
  if (S_ISDIR (st.st_mode))
    {
      if (st.st_dev != p->dev)
        return match ? put_skip (p, rel, CSR_SKIP_MOUNT, 0) : 0;
      if (depth >= MAX_DEPTH)
        return match ? put_skip (p, rel, CSR_SKIP_DEEP, 0) : 0;
      int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return match ? put_skip (p, rel, CSR_SKIP_UNREADABLE, 0) : 0;
      /* A directory csrun made (an input's) comes only with the files in it. */
      if (match && !untouched (&st))
        {
          p->e = (struct csr_pack_entry){ .type = CSR_PACK_DIR, .mode = st.st_mode & 0777 };
          snprintf (p->e.path, sizeof p->e.path, "%s", rel);
          if (csr_pack_put (p->out, &p->e, NULL) < 0)
            {
              close (fd);
              return -1;
            }
        }
      return pack_tree (p, fd, rel, depth + 1);
    }
  if (!match)
    return 0;
  if (S_ISLNK (st.st_mode))
    return put_skip (p, rel, CSR_SKIP_SYMLINK, 0);
  if (!S_ISREG (st.st_mode))
    return put_skip (p, rel, CSR_SKIP_SPECIAL, 0);
  if (untouched (&st))
    return 0;
  uint64_t size = (uint64_t)st.st_size;
  if (size > s->out_max || p->total + size > s->out_max)
    return put_skip (p, rel, CSR_SKIP_OVER_CAP, size);
  cleanup_close int fd = openat (dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return put_skip (p, rel, CSR_SKIP_UNREADABLE, size);
  p->total += size;
  p->e = (struct csr_pack_entry){ .type = CSR_PACK_REG, .mode = st.st_mode & 0777, .size = size };
  snprintf (p->e.path, sizeof p->e.path, "%s", rel);
  if (csr_pack_put (p->out, &p->e, NULL) < 0 || csr_pack_copy (p->out, fd, size, NULL, NULL) < 0)
    return -1;
  return 0;
}

/* DFD (owned) is the directory REL ("" for /work). */
static int
pack_tree (struct packer *p, int dfd, const char *rel, int depth)
{
  cleanup_dir DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return 0;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      char sub[CSR_PACK_PATH_MAX];
      if ((size_t)snprintf (sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name)
          >= sizeof sub)
        {
          if (rel[0] && put_skip (p, rel, CSR_SKIP_DEEP, 0) < 0)
            return -1;
          continue;
        }
      if (pack_entry (p, dirfd (d), de->d_name, sub, depth) < 0)
        return -1;
    }
  return 0;
}

void
csr_jail_pack_outputs (void *arg, int fd)
{
  const struct jail_snippet *spec = arg;
  if (ftruncate (fd, 0) < 0 || lseek (fd, 0, SEEK_SET) < 0)
    return;
  int wfd = open ("/work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (wfd < 0)
    return;
  struct stat st;
  if (fstat (wfd, &st) < 0)
    {
      close (wfd);
      return;
    }
  struct packer *p = calloc (1, sizeof *p);
  if (p == NULL)
    {
      close (wfd);
      return;
    }
  *p = (struct packer){ .spec = spec, .out = fd, .dev = st.st_dev };
  /* An incomplete pack (no END) is reported as such by the supervisor. */
  if (pack_tree (p, wfd, "", 0) == 0)
    {
      struct csr_pack_entry *end = &p->e;
      *end = (struct csr_pack_entry){ .type = CSR_PACK_END };
      csr_pack_put (fd, end, NULL);
    }
  free (p);
}
