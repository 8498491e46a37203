#include "config.h"

/* csrun — reading and writing cgroupfs files: by directory fd (the
 * ephemeral cgroups, the resources writer) and by path (a container's
 * recorded directories), with the test seams for fake trees. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ctype.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "cgroup-internal.h"

#define CG_FILE_MAX (4 << 20)

/* ------------------------------------------------------------ file helpers */

int
csr_cg_write (int dfd, const char *file, const char *val)
{
  int fd = openat (dfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return -errno;
  size_t len = strlen (val);
  ssize_t n;
  while ((n = write (fd, val, len)) < 0 && errno == EINTR)
    ;
  int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
  close (fd);
  return r;
}

int
csr_cg_write_u64 (int dfd, const char *file, uint64_t val)
{
  char buf[24];
  snprintf (buf, sizeof buf, "%" PRIu64, val);
  return csr_cg_write (dfd, file, buf);
}

ssize_t
csr_cg_read (int dfd, const char *file, char *buf, size_t size)
{
  int fd = openat (dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return -errno;
  size_t used = 0;
  while (used + 1 < size)
    {
      ssize_t n = read (fd, buf + used, size - 1 - used);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          close (fd);
          return -e;
        }
      if (n == 0)
        break;
      used += (size_t)n;
    }
  close (fd);
  buf[used] = '\0';
  return (ssize_t)used;
}

int
csr_cg_open_dir (const char *path)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int
csr_cg_mkdir_open (int dfd, const char *name, bool exist_ok)
{
  if (csr_cg_mkdirat (dfd, name, 0755) < 0 && (errno != EEXIST || !exist_ok))
    return -errno;
  int fd = openat (dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* ---------------------------------------------------------------- files */

int
csr_cg_path_write (const char *dir, const char *file, const char *val, csr_error **err)
{
  cleanup_free char *p = NULL;
  if (asprintf (&p, "%s/%s", dir, file) < 0)
    return csr_error_errno (err, "cgroup: %s/%s", dir, file);
  cleanup_close int fd = open (p, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return 1;
      return csr_error_errno (err, "cgroup: open '%s'", p);
    }
  size_t len = strlen (val);
  ssize_t n;
  do
    n = write (fd, val, len);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return csr_error_errno (err, "cgroup: write '%s' to '%s'", val, p);
  if ((size_t)n != len)
    return csr_error_set (err, EIO, "cgroup: short write of '%s' to '%s'", val, p);
  return 0;
}

int
csr_cg_path_read (const char *dir, const char *file, char **out, csr_error **err)
{
  *out = NULL;
  cleanup_free char *p = NULL;
  if (asprintf (&p, "%s/%s", dir, file) < 0)
    return csr_error_errno (err, "cgroup: %s/%s", dir, file);
  cleanup_close int fd = open (p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return 1;
      return csr_error_errno (err, "cgroup: open '%s'", p);
    }
  if (csr_read_fd (fd, CG_FILE_MAX, out, NULL, err) < 0)
    return csr_error_wrap (err, "cgroup: '%s'", p);
  return 0;
}

bool
csr_cg_path_exists (const char *dir, const char *file)
{
  cleanup_free char *p = NULL;
  if (asprintf (&p, "%s/%s", dir, file) < 0)
    return false;
  return access (p, F_OK) == 0;
}

/* ---------------------------------------------------------------- small helpers */

void
csr_cg_sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

void
csr_cg_rtrim (char *s)
{
  size_t n = strlen (s);
  while (n > 0 && isspace ((unsigned char)s[n - 1]))
    s[--n] = '\0';
}

bool
csr_cg_word_in (const char *list, const char *word)
{
  size_t wl = strlen (word);
  const char *p = list;
  while (*p)
    {
      while (*p == ' ' || *p == '\n' || *p == '\t')
        p++;
      const char *s = p;
      while (*p && *p != ' ' && *p != '\n' && *p != '\t')
        p++;
      if ((size_t)(p - s) == wl && wl > 0 && memcmp (s, word, wl) == 0)
        return true;
    }
  return false;
}

bool
csr_cg_key_u64 (const char *text, const char *key, uint64_t *val)
{
  size_t kl = strlen (key);
  for (const char *line = text; line && *line;
       line = strchr (line, '\n'), line = line ? line + 1 : NULL)
    {
      if (strncmp (line, key, kl) != 0 || line[kl] != ' ')
        continue;
      const char *p = line + kl + 1;
      if (!isdigit ((unsigned char)*p))
        return false;
      errno = 0;
      char *end;
      unsigned long long v = strtoull (p, &end, 10);
      if (errno != 0 || (*end != '\n' && *end != '\0'))
        return false;
      *val = (uint64_t)v;
      return true;
    }
  return false;
}
