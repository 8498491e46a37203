#include "config.h"
#include "pack.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fs.h"

#define PACK_MAGIC 0x31505343u /* "CSP1" */

struct pack_hdr
{
  uint32_t magic;
  uint8_t type, reason;
  uint16_t pad;
  uint32_t mode;
  uint32_t path_len, link_len;
  uint64_t size;
};

const char *
csr_pack_reason_text (enum csr_pack_reason r)
{
  switch (r)
    {
    case CSR_SKIP_SYMLINK:
      return "symbolic link (not followed)";
    case CSR_SKIP_SPECIAL:
      return "not a regular file or directory (fifo, socket or device)";
    case CSR_SKIP_OVER_CAP:
      return "over the --out-max size cap";
    case CSR_SKIP_MOUNT:
      return "a --mount'ed directory (not copied)";
    case CSR_SKIP_UNREADABLE:
      return "unreadable";
    case CSR_SKIP_DEEP:
      return "nested too deep, or a path below it too long";
    case CSR_SKIP_NONE:
      break;
    }
  return "skipped";
}

bool
csr_pack_path_ok (const char *rel)
{
  size_t len = strlen (rel);
  if (len == 0 || len >= CSR_PACK_PATH_MAX || rel[0] == '/' || rel[len - 1] == '/')
    return false;
  for (const char *c = rel; *c;)
    {
      const char *end = strchr (c, '/');
      size_t n = end ? (size_t)(end - c) : strlen (c);
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return false;
      c += n + (end ? 1 : 0);
    }
  return true;
}

int
csr_pack_put (int fd, const struct csr_pack_entry *e, csr_error **err)
{
  struct pack_hdr h = {
    .magic = PACK_MAGIC,
    .type = (uint8_t)e->type,
    .reason = (uint8_t)e->reason,
    .mode = e->mode & 07777,
    .size = e->size,
  };
  if (e->type != CSR_PACK_END)
    {
      h.path_len = (uint32_t)strnlen (e->path, CSR_PACK_PATH_MAX - 1);
      h.link_len = e->type == CSR_PACK_LNK ? (uint32_t)strnlen (e->link, CSR_PACK_PATH_MAX - 1) : 0;
    }
  if (csr_write_all (fd, &h, sizeof h, err) < 0 || csr_write_all (fd, e->path, h.path_len, err) < 0
      || csr_write_all (fd, e->link, h.link_len, err) < 0)
    return csr_error_wrap (err, "write the file pack");
  return 0;
}

static int
read_exact (int fd, void *buf, size_t n, csr_error **err)
{
  int r = csr_read_exact (fd, buf, n, "read the file pack", err);
  if (r > 0)
    return csr_error_set (err, EPROTO, "the file pack is truncated");
  return r;
}

int
csr_pack_copy (int out, int in, uint64_t size, struct csr_sha256 *sha, csr_error **err)
{
  static __thread char buf[64 * 1024];
  while (size > 0)
    {
      size_t want = size < sizeof buf ? (size_t)size : sizeof buf;
      ssize_t r = read (in, buf, want);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return csr_error_errno (err, "read");
      if (r == 0)
        return csr_error_set (err, EIO, "the file ended early (changed while it was copied?)");
      if (sha)
        csr_sha256_update (sha, buf, (size_t)r);
      if (csr_write_all (out, buf, (size_t)r, err) < 0)
        return -1;
      size -= (uint64_t)r;
    }
  return 0;
}

int
csr_pack_skip_data (int fd, uint64_t size, csr_error **err)
{
  if (lseek (fd, (off_t)size, SEEK_CUR) < 0)
    return csr_error_errno (err, "skip in the file pack");
  return 0;
}

int
csr_pack_get (int fd, struct csr_pack_entry *e, csr_error **err)
{
  struct pack_hdr h;
  if (read_exact (fd, &h, sizeof h, err) < 0)
    return -1;
  if (h.magic != PACK_MAGIC || h.type > CSR_PACK_SKIP || h.path_len >= CSR_PACK_PATH_MAX
      || h.link_len >= CSR_PACK_PATH_MAX)
    return csr_error_set (err, EPROTO, "the file pack is malformed");
  if (h.type == CSR_PACK_END)
    return 0;
  e->type = h.type;
  e->reason = h.reason;
  e->mode = h.mode & 07777;
  e->size = h.size;
  if (read_exact (fd, e->path, h.path_len, err) < 0
      || read_exact (fd, e->link, h.link_len, err) < 0)
    return -1;
  e->path[h.path_len] = '\0';
  e->link[h.link_len] = '\0';
  if (memchr (e->path, '\0', h.path_len) || !csr_pack_path_ok (e->path))
    return csr_error_set (err, EPROTO, "the file pack has a bad path");
  if (h.type != CSR_PACK_REG && h.type != CSR_PACK_SKIP && h.size != 0)
    return csr_error_set (err, EPROTO, "the file pack is malformed");
  if (h.type == CSR_PACK_SKIP)
    e->size = h.size; /* informative: no data follows */
  return 1;
}

static int
open_one (int dirfd, const char *name, csr_error **err)
{
  struct open_how how = {
    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd = (int)syscall (SYS_openat2, dirfd, name, &how, sizeof how);
  if (fd < 0 && errno == ENOSYS)
    fd = openat (dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT)
    return csr_error_errno (err, "open the directory %s", name);
  return fd;
}

int
csr_beneath_parent (int rootfd, const char *rel, bool mkdirs, mode_t dirmode, const char **leaf,
                    csr_error **err)
{
  if (!csr_pack_path_ok (rel))
    return csr_error_set (err, EINVAL, "bad relative path %s", rel);
  int cur = fcntl (rootfd, F_DUPFD_CLOEXEC, 3);
  if (cur < 0)
    return csr_error_errno (err, "dup");
  const char *c = rel;
  for (;;)
    {
      const char *slash = strchr (c, '/');
      if (slash == NULL)
        break;
      char name[256];
      size_t n = (size_t)(slash - c);
      if (n >= sizeof name)
        {
          close (cur);
          return csr_error_set (err, ENAMETOOLONG, "a component of %s is too long", rel);
        }
      memcpy (name, c, n);
      name[n] = '\0';
      int next = open_one (cur, name, err);
      if (next < 0 && errno == ENOENT && mkdirs)
        {
          if (mkdirat (cur, name, dirmode) < 0 && errno != EEXIST)
            {
              csr_error_errno (err, "mkdir %.*s", (int)(slash - rel), rel);
              close (cur);
              return -1;
            }
          next = open_one (cur, name, err);
        }
      if (next < 0)
        {
          if (errno == ENOENT)
            csr_error_errno (err, "open %.*s", (int)(slash - rel), rel);
          else
            csr_error_wrap (err, "%.*s", (int)(slash - rel), rel);
          close (cur);
          return -1;
        }
      close (cur);
      cur = next;
      c = slash + 1;
    }
  *leaf = c;
  return cur;
}
