/* csrun — small file-system helpers. */
#include "config.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"

int
csr_write_all (int fd, const void *buf, size_t len, csr_error **err)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "write");
        }
      if (n == 0)
        return csr_error_set (err, EIO, "write: no progress");
      p += n;
      len -= (size_t)n;
    }
  return 0;
}

int
csr_read_exact (int fd, void *buf, size_t n, const char *what, csr_error **err)
{
  char *p = buf;
  while (n > 0)
    {
      ssize_t r = read (fd, p, n);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "%s", what);
      if (r == 0)
        return 1;
      p += r;
      n -= (size_t)r;
    }
  return 0;
}

int
csr_read_fd (int fd, size_t max, char **out, size_t *len, csr_error **err)
{
  /* Reading MAX + 1 bytes is enough to know the file is too large. */
  size_t lim = max < SIZE_MAX - 1 ? max + 1 : SIZE_MAX - 1;
  size_t cap = 4096;
  struct stat st;
  if (fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_size > 0)
    cap = (uintmax_t)st.st_size < lim ? (size_t)st.st_size + 1 : lim;
  if (cap > lim)
    cap = lim;
  cleanup_free char *buf = malloc (cap + 1);
  if (buf == NULL)
    return csr_error_errno (err, "read: cannot allocate %zu bytes", cap + 1);
  size_t used = 0;
  for (;;)
    {
      if (used == cap)
        {
          if (cap >= lim)
            break;
          size_t ncap = cap <= lim / 2 ? cap * 2 : lim;
          char *nbuf = realloc (buf, ncap + 1);
          if (nbuf == NULL)
            return csr_error_errno (err, "read: cannot allocate %zu bytes", ncap + 1);
          buf = nbuf;
          cap = ncap;
        }
      ssize_t n = read (fd, buf + used, cap - used);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return csr_error_errno (err, "read");
        }
      if (n == 0)
        break;
      used += (size_t)n;
    }
  if (used > max)
    return csr_error_set (err, EFBIG, "read: more than %zu bytes", max);
  buf[used] = '\0';
  if (len)
    *len = used;
  *out = steal_pointer (&buf);
  return 0;
}

int
csr_read_file (const char *path, size_t max, char **out, size_t *len, csr_error **err)
{
  /* O_NONBLOCK: opening a FIFO must not hang before we can refuse it. */
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return csr_error_errno (err, "read '%s'", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "read '%s': fstat", path);
  if (S_ISDIR (st.st_mode))
    return csr_error_set (err, EISDIR, "read '%s'", path);
  if (!S_ISREG (st.st_mode))
    return csr_error_set (err, EINVAL, "read '%s': not a regular file", path);
  if (csr_read_fd (fd, max, out, len, err) < 0)
    return csr_error_wrap (err, "'%s'", path);
  return 0;
}

static bool
is_dir (const char *path)
{
  struct stat st;
  return stat (path, &st) == 0 && S_ISDIR (st.st_mode);
}

/* Components this function creates get exactly MODE (the umask does not apply). */
int
csr_mkdir_p (const char *path, mode_t mode, csr_error **err)
{
  if (path == NULL || *path == '\0')
    return csr_error_set (err, EINVAL, "mkdir: empty path");
  if (is_dir (path))
    return 0;
  cleanup_free char *copy = strdup (path);
  if (copy == NULL)
    return csr_error_errno (err, "mkdir '%s'", path);
  char *p = copy;
  while (*p == '/')
    p++;
  for (;;)
    {
      char *slash = strchr (p, '/');
      if (slash)
        *slash = '\0';
      if (*p != '\0' && strcmp (p, ".") != 0)
        {
          if (mkdir (copy, mode) == 0)
            {
              if (chmod (copy, mode) < 0)
                return csr_error_errno (err, "chmod '%s'", copy);
            }
          else
            {
              int saved = errno;
              if (!is_dir (copy))
                {
                  errno = saved == EEXIST ? ENOTDIR : saved;
                  return csr_error_errno (err, "mkdir '%s'", copy);
                }
            }
        }
      if (slash == NULL)
        break;
      *slash = '/';
      p = slash + 1;
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
    }
  return 0;
}

/* ---------------------------------------------------------------- rm -rf */

struct rm_level
{
  ino_t ino;
  char *name;
};

struct rm_state
{
  const char *top; /* for messages */
  dev_t dev;
  struct rm_level *stack;
  size_t depth, cap;
};

/* Open the directory NAME below DFD for removal of its entries: give it back
 * read/write/search permission for us when the archive left it without, and
 * refuse to cross into another file system. */
static int
rm_open_dir (struct rm_state *s, int dfd, const char *name, struct stat *st, csr_error **err)
{
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES && fchmodat (dfd, name, 0700, 0) == 0)
    fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "remove '%s': open '%s'", s->top, name);
  if (fstat (fd, st) < 0)
    {
      csr_error_errno (err, "remove '%s': fstat '%s'", s->top, name);
      close (fd);
      return -1;
    }
  if (st->st_dev != s->dev)
    {
      close (fd);
      return csr_error_set (err, EXDEV, "remove '%s': '%s' is on another file system", s->top,
                            name);
    }
  if ((st->st_mode & S_IRWXU) != S_IRWXU && fchmod (fd, (st->st_mode & 07777) | S_IRWXU) < 0)
    {
      csr_error_errno (err, "remove '%s': chmod '%s'", s->top, name);
      close (fd);
      return -1;
    }
  return fd;
}

static int
rm_push (struct rm_state *s, ino_t ino, const char *name, csr_error **err)
{
  if (s->depth == s->cap)
    {
      size_t ncap = s->cap ? s->cap * 2 : 16;
      struct rm_level *n = realloc (s->stack, ncap * sizeof *n);
      if (n == NULL)
        return csr_error_errno (err, "remove '%s'", s->top);
      s->stack = n;
      s->cap = ncap;
    }
  char *copy = strdup (name);
  if (copy == NULL)
    return csr_error_errno (err, "remove '%s'", s->top);
  s->stack[s->depth].ino = ino;
  s->stack[s->depth].name = copy;
  s->depth++;
  return 0;
}

/* Remove the directory tree BASE below PFD.  Depth-first without keeping one
 * descriptor per level: descend into the first subdirectory found, and once a
 * directory is empty go back up through ".." (checked against the inode we
 * came from) and restart reading the parent.  Deep trees can't exhaust fds. */
static int
rm_tree (struct rm_state *s, int pfd, const char *base, csr_error **err)
{
  struct stat st;
  int ret = -1;
  DIR *d = NULL;
  int fd = rm_open_dir (s, pfd, base, &st, err);
  if (fd < 0)
    return -1;
  if (rm_push (s, st.st_ino, base, err) < 0)
    goto out;
  for (;;)
    {
      d = fdopendir (fd);
      if (d == NULL)
        {
          csr_error_errno (err, "remove '%s': fdopendir", s->top);
          goto out;
        }
      fd = -1;
      bool descended = false;
      struct dirent *de;
      for (;;)
        {
          errno = 0;
          de = readdir (d);
          if (de == NULL)
            break;
          const char *name = de->d_name;
          if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
            continue;
          bool sub;
          if (de->d_type == DT_UNKNOWN)
            {
              if (fstatat (dirfd (d), name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                {
                  if (errno == ENOENT)
                    continue;
                  csr_error_errno (err, "remove '%s': stat '%s'", s->top, name);
                  goto out;
                }
              sub = S_ISDIR (st.st_mode);
            }
          else
            sub = de->d_type == DT_DIR;
          if (!sub)
            {
              if (unlinkat (dirfd (d), name, 0) < 0 && errno != ENOENT)
                {
                  csr_error_errno (err, "remove '%s': unlink '%s'", s->top, name);
                  goto out;
                }
              continue;
            }
          int child = rm_open_dir (s, dirfd (d), name, &st, err);
          if (child < 0)
            goto out;
          if (rm_push (s, st.st_ino, name, err) < 0)
            {
              close (child);
              goto out;
            }
          closedir (d);
          d = NULL;
          fd = child;
          descended = true;
          break;
        }
      if (descended)
        continue;
      if (errno != 0)
        {
          csr_error_errno (err, "remove '%s': readdir", s->top);
          goto out;
        }
      /* The directory on top of the stack is empty now. */
      struct rm_level *cur = &s->stack[s->depth - 1];
      if (s->depth == 1)
        {
          closedir (d);
          d = NULL;
          if (unlinkat (pfd, base, AT_REMOVEDIR) < 0 && errno != ENOENT)
            {
              csr_error_errno (err, "remove '%s'", s->top);
              goto out;
            }
          ret = 0;
          goto out;
        }
      int up = openat (dirfd (d), "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (up < 0)
        {
          csr_error_errno (err, "remove '%s': open '..'", s->top);
          goto out;
        }
      if (fstat (up, &st) < 0 || st.st_dev != s->dev || st.st_ino != s->stack[s->depth - 2].ino)
        {
          close (up);
          csr_error_set (err, EBUSY, "remove '%s': the tree moved during removal", s->top);
          goto out;
        }
      closedir (d);
      d = NULL;
      if (unlinkat (up, cur->name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        {
          csr_error_errno (err, "remove '%s': rmdir '%s'", s->top, cur->name);
          close (up);
          goto out;
        }
      free (cur->name);
      s->depth--;
      fd = up;
    }
out:
  if (d)
    closedir (d);
  if (fd >= 0)
    close (fd);
  return ret;
}

DIR *
csr_fdopendir_or_close (int fd)
{
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    close (fd);
  return d;
}

int
csr_rm_rf (const char *path, csr_error **err)
{
  if (path == NULL || *path == '\0')
    return csr_error_set (err, EINVAL, "remove: empty path");
  cleanup_free char *copy = strdup (path);
  if (copy == NULL)
    return csr_error_errno (err, "remove '%s'", path);
  size_t n = strlen (copy);
  while (n > 1 && copy[n - 1] == '/')
    copy[--n] = '\0';
  const char *parent, *base;
  char *slash = strrchr (copy, '/');
  if (slash == NULL)
    {
      parent = ".";
      base = copy;
    }
  else
    {
      *slash = '\0';
      parent = slash == copy ? "/" : copy;
      base = slash + 1;
    }
  if (*base == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return csr_error_set (err, EINVAL, "remove '%s': refusing to remove this path", path);

  cleanup_close int pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    {
      if (errno == ENOENT)
        return 0;
      return csr_error_errno (err, "remove '%s'", path);
    }
  struct stat st;
  if (fstatat (pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return csr_error_errno (err, "remove '%s'", path);
    }
  if (!S_ISDIR (st.st_mode))
    {
      if (unlinkat (pfd, base, 0) < 0 && errno != ENOENT)
        return csr_error_errno (err, "remove '%s'", path);
      return 0;
    }
  struct rm_state s = { .top = path, .dev = st.st_dev };
  int ret = rm_tree (&s, pfd, base, err);
  for (size_t i = 0; i < s.depth; i++)
    free (s.stack[i].name);
  free (s.stack);
  return ret;
}

/* ---------------------------------------------------------------- atomic write */

static int
fsync_parent (const char *path)
{
  cleanup_free char *copy = strdup (path);
  if (copy == NULL)
    return -1;
  char *slash = strrchr (copy, '/');
  const char *dir = ".";
  if (slash == copy)
    dir = "/";
  else if (slash)
    {
      *slash = '\0';
      dir = copy;
    }
  cleanup_close int dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return -1;
  if (fsync (dfd) < 0 && errno != EINVAL)
    return -1;
  return 0;
}

int
csr_write_file_atomic (const char *path, const void *data, size_t len, mode_t mode, csr_error **err)
{
  cleanup_free char *tmp = NULL;
  if (asprintf (&tmp, "%s.tmp-XXXXXX", path) < 0)
    {
      tmp = NULL;
      return csr_error_errno (err, "write '%s'", path);
    }
  cleanup_close int fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "write '%s': create a temporary file", path);
  if (fchmod (fd, mode) < 0)
    {
      csr_error_errno (err, "write '%s': chmod", path);
      goto fail;
    }
  if (csr_write_all (fd, data, len, err) < 0)
    {
      csr_error_wrap (err, "write '%s'", path);
      goto fail;
    }
  if (fsync (fd) < 0)
    {
      csr_error_errno (err, "write '%s': fsync", path);
      goto fail;
    }
  int cfd = steal_fd (&fd);
  if (close (cfd) < 0)
    {
      csr_error_errno (err, "write '%s': close", path);
      goto fail;
    }
  if (rename (tmp, path) < 0)
    {
      csr_error_errno (err, "write '%s': rename", path);
      goto fail;
    }
  if (fsync_parent (path) < 0)
    return csr_error_errno (err, "write '%s': fsync the directory", path);
  return 0;
fail:
  unlink (tmp);
  return -1;
}

void
csr_touch_if_older (int dirfd, const char *name, long age_s)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
    return;
  if (time (NULL) - st.st_mtim.tv_sec < age_s)
    return;
  (void)utimensat (dirfd, name, NULL, AT_SYMLINK_NOFOLLOW);
}

void
csr_tmp_name (char name[CSR_TMP_NAME_MAX])
{
  static unsigned counter;
  unsigned r = 0;
  if (getrandom (&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
    r = (unsigned)time (NULL);
  snprintf (name, CSR_TMP_NAME_MAX, ".csrun-tmp.%ld.%08x%u", (long)getpid (), r, counter++);
}

int
csr_tmp_create_at (int dirfd, mode_t mode, char name[CSR_TMP_NAME_MAX], csr_error **err)
{
  for (int tries = 0; tries < 16; tries++)
    {
      csr_tmp_name (name);
      int fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd >= 0)
        return fd;
      if (errno != EEXIST)
        return csr_error_errno (err, "create a temporary file");
    }
  return csr_error_errno (err, "create a temporary file");
}

int
csr_tmp_commit_at (int dirfd, const char *name, int fd, const char *leaf, csr_error **err)
{
  if (close (fd) < 0)
    csr_error_errno (err, "close");
  else if (renameat (dirfd, name, dirfd, leaf) < 0)
    csr_error_errno (err, "rename");
  else
    return 0;
  (void)unlinkat (dirfd, name, 0);
  return -1;
}
