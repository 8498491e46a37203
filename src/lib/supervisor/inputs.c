/* csrun — --in: the host's files packed once, before the first attempt,
 * into a sealed memfd that every attempt's jail unpacks into /work or /tmp
 * (jail/files.c). */
#include "config.h"
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/pack.h"

#define MAX_DEPTH 64

struct packer
{
  int fd;
  const char *name; /* the --in argument, for messages */
  uint64_t max, total, this_input;
  uint64_t entries; /* files, directories and symlinks of this input (inodes in the jail) */
  bool bad;         /* the error is the input's, not csrun's */
};

/* The input's fault: "--in NAME: WHAT WHY". */
static int
bad (struct packer *p, csr_error **err, int errnum, const char *what, const char *why)
{
  p->bad = true;
  (void)errnum; /* the message says it all: no strerror appended */
  return csr_error_set (err, 0, "--in %s: %s%s %s", p->name, what[0] == '/' ? "" : "/", what, why);
}

static int
count (struct packer *p, uint64_t size, csr_error **err)
{
  p->entries++;
  p->total += size;
  p->this_input += size;
  if (p->total > p->max)
    {
      p->bad = true;
      return csr_error_set (err, 0,
                            "--in %s: the inputs are larger than --in-max (%llu bytes): "
                            "raise --in-max or use --mount",
                            p->name, (unsigned long long)p->max);
    }
  return 0;
}

static int
pack_file (struct packer *p, int fd, const struct stat *st, const char *rel, csr_error **err)
{
  if (count (p, (uint64_t)st->st_size, err) < 0)
    return -1;
  struct csr_pack_entry e
      = { .type = CSR_PACK_REG, .mode = st->st_mode & 0777, .size = (uint64_t)st->st_size };
  snprintf (e.path, sizeof e.path, "%s", rel);
  if (csr_pack_put (p->fd, &e, err) < 0)
    return -1;
  if (csr_pack_copy (p->fd, fd, e.size, NULL, err) < 0)
    return csr_error_wrap (err, "--in %s: %s", p->name, rel);
  return 0;
}

static int pack_dir (struct packer *p, int dfd, const char *rel, mode_t mode, int depth,
                     csr_error **err);

/* DFD/NAME, found in a directory: not followed when it is a symlink. */
static int
pack_at (struct packer *p, int dfd, const char *name, const char *rel, int depth, csr_error **err)
{
  struct stat st;
  if (fstatat (dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "--in %s: stat %s", p->name, rel);
  if (S_ISLNK (st.st_mode))
    {
      struct csr_pack_entry e = { .type = CSR_PACK_LNK, .mode = 0777 };
      snprintf (e.path, sizeof e.path, "%s", rel);
      ssize_t n = readlinkat (dfd, name, e.link, sizeof e.link - 1);
      if (n < 0)
        return csr_error_errno (err, "--in %s: readlink %s", p->name, rel);
      e.link[n] = '\0';
      p->entries++;
      return csr_pack_put (p->fd, &e, err);
    }
  if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    return bad (p, err, EINVAL, rel,
                "is not a regular file, directory or symlink (a fifo, socket or device is "
                "not copied)");
  int fd = openat (dfd, name,
                   (S_ISDIR (st.st_mode) ? O_DIRECTORY : 0) | O_RDONLY | O_NOFOLLOW | O_CLOEXEC
                       | O_NONBLOCK);
  if (fd < 0)
    {
      p->bad = true;
      return csr_error_errno (err, "--in %s: open %s", p->name, rel);
    }
  cleanup_close int cfd = fd;
  if (S_ISDIR (st.st_mode))
    return pack_dir (p, cfd, rel, st.st_mode, depth + 1, err);
  if (fstat (cfd, &st) < 0)
    return csr_error_errno (err, "--in %s: stat %s", p->name, rel);
  return pack_file (p, cfd, &st, rel, err);
}

static int
pack_dir (struct packer *p, int dfd, const char *rel, mode_t mode, int depth, csr_error **err)
{
  if (depth > MAX_DEPTH)
    return bad (p, err, ELOOP, rel, "is nested too deep");
  p->entries++;
  struct csr_pack_entry e = { .type = CSR_PACK_DIR, .mode = (mode & 0777) | 0700 };
  snprintf (e.path, sizeof e.path, "%s", rel);
  if (csr_pack_put (p->fd, &e, err) < 0)
    return -1;
  int dup = fcntl (dfd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0)
    return csr_error_errno (err, "dup");
  cleanup_dir DIR *d = fdopendir (dup);
  if (d == NULL)
    {
      close (dup);
      return csr_error_errno (err, "--in %s: read %s", p->name, rel);
    }
  struct dirent *de;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      char sub[CSR_PACK_PATH_MAX];
      if ((size_t)snprintf (sub, sizeof sub, "%s/%s", rel, de->d_name) >= sizeof sub)
        return bad (p, err, ENAMETOOLONG, rel, "has a path below it that is too long");
      if (pack_at (p, dfd, de->d_name, sub, depth, err) < 0)
        return -1;
      errno = 0;
    }
  if (errno)
    return csr_error_errno (err, "--in %s: read %s", p->name, rel);
  return 0;
}

/* One --in: its top-level path is followed. */
static int
pack_input (struct packer *p, const struct csr_in_arg *in, csr_error **err)
{
  const char *rel = in->dest + 1;
  cleanup_close int fd = open (in->src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    {
      p->bad = true;
      return csr_error_errno (err, "--in %s", in->src);
    }
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "--in %s: stat", in->src);
  if (S_ISDIR (st.st_mode))
    return pack_dir (p, fd, rel, st.st_mode, 0, err);
  if (!S_ISREG (st.st_mode))
    return bad (p, err, EINVAL, in->dest,
                "would not be a regular file or a directory (a fifo, "
                "socket or device is not copied)");
  return pack_file (p, fd, &st, rel, err);
}

int
csr_inputs_pack (const struct csr_in_arg *in, size_t n, uint64_t max, uint64_t tmp_size,
                 uint64_t tmp_inodes, struct csr_files_report *rep, int *fdp, bool *bad_input,
                 csr_error **err)
{
  *bad_input = false;
  *fdp = -1;
  rep->inputs = calloc (n ? n : 1, sizeof *rep->inputs);
  if (rep->inputs == NULL)
    return csr_error_set (err, ENOMEM, "allocate the inputs");
  cleanup_close int fd = memfd_create ("csrun-inputs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return csr_error_errno (err, "memfd_create");
  struct packer p = { .fd = fd, .max = max };
  uint64_t in_work = 0, in_tmp = 0, inodes_work = 0, inodes_tmp = 0;
  for (size_t i = 0; i < n; i++)
    {
      p.name = in[i].src;
      p.this_input = 0;
      p.entries = 0;
      if (pack_input (&p, &in[i], err) < 0)
        {
          *bad_input = p.bad;
          return -1;
        }
      struct csr_input_report *r = &rep->inputs[rep->n_inputs++];
      r->path = strdup (in[i].src);
      r->dest = strdup (in[i].dest);
      r->size = p.this_input;
      if (r->path == NULL || r->dest == NULL)
        return csr_error_set (err, ENOMEM, "copy the inputs");
      if (csr_path_under (in[i].dest, "/work"))
        in_work += p.this_input, inodes_work += p.entries;
      else
        in_tmp += p.this_input, inodes_tmp += p.entries;
      /* A few inodes stay for the tmpfs' root, snippet.py, DEST's parents. */
      if (tmp_inodes > 0 && (inodes_work + 64 > tmp_inodes || inodes_tmp + 64 > tmp_inodes))
        {
          *bad_input = true;
          return csr_error_set (
              err, 0,
              "--in %s: the inputs have too many files (%llu) for the jail's "
              "%s tmpfs (at most %llu)",
              in[i].src,
              (unsigned long long)(inodes_work + 64 > tmp_inodes ? inodes_work : inodes_tmp),
              inodes_work + 64 > tmp_inodes ? "/work" : "/tmp",
              (unsigned long long)(tmp_inodes - 64));
        }
      if (in_work > tmp_size || in_tmp > tmp_size)
        {
          *bad_input = true;
          return csr_error_set (
              err, 0,
              "--in %s: the inputs (%llu bytes) do not fit in the jail's %s "
              "tmpfs (--tmp-size, %llu bytes)",
              in[i].src, (unsigned long long)(in_work > tmp_size ? in_work : in_tmp),
              in_work > tmp_size ? "/work" : "/tmp", (unsigned long long)tmp_size);
        }
    }
  struct csr_pack_entry end = { .type = CSR_PACK_END };
  if (csr_pack_put (fd, &end, err) < 0)
    return -1;
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
    return csr_error_errno (err, "seal the inputs' memfd");
  if (lseek (fd, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "rewind the inputs' memfd");
  *fdp = fd;
  fd = -1;
  return 0;
}
