/* csrun — the snippet's standard input, kept for every attempt (stdin.h). */
#include "config.h"
#include "stdin.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../util/buf.h"
#include "../util/cleanup.h"

#define READ_CHUNK (64 * 1024)

void
csr_stdin_init (struct csr_stdin *s, int src, uint64_t max)
{
  memset (s, 0, sizeof *s);
  s->src = src;
  s->max = max;
  s->spill = -1;
  s->mem_limit = CSR_STDIN_MEM_MAX;
}

void
csr_stdin_release (struct csr_stdin *s)
{
  free (s->mem);
  s->mem = NULL;
  if (s->spill >= 0)
    close (s->spill);
  s->spill = -1;
}

/* An unlinked temporary file in $TMPDIR (else /tmp): O_TMPFILE, else
 * mkstemp + unlink. */
static int
open_spill (csr_error **err)
{
  const char *dir = getenv ("TMPDIR");
  if (dir == NULL || dir[0] != '/')
    dir = "/tmp";
  int fd = open (dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0)
    return fd;
  cleanup_free char *tmpl = NULL;
  if (asprintf (&tmpl, "%s/csrun-stdin-XXXXXX", dir) < 0)
    return csr_error_set (err, ENOMEM, "allocate a temporary file name");
  fd = mkostemp (tmpl, O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "create a temporary file in %s for the standard input", dir);
  if (unlink (tmpl) < 0)
    {
      csr_error_errno (err, "unlink %s", tmpl);
      close (fd);
      return -1;
    }
  return fd;
}

static int
store (struct csr_stdin *s, const char *buf, size_t n, csr_error **err)
{
  size_t in_mem = 0;
  if (s->len < s->mem_limit)
    {
      in_mem = (size_t)(s->mem_limit - s->len) < n ? (size_t)(s->mem_limit - s->len) : n;
      if (csr_buf_reserve (&s->mem, &s->mem_cap, s->mem_len + in_mem, READ_CHUNK) < 0)
        return csr_error_set (err, ENOMEM, "keep the standard input");
      memcpy (s->mem + s->mem_len, buf, in_mem);
      s->mem_len += in_mem;
    }
  if (in_mem < n)
    {
      if (s->spill < 0 && (s->spill = open_spill (err)) < 0)
        return -1;
      for (size_t done = in_mem; done < n;)
        {
          ssize_t w = pwrite (s->spill, buf + done, n - done, (off_t)(s->len + done - s->mem_len));
          if (w < 0 && errno == EINTR)
            continue;
          if (w <= 0)
            return csr_error_errno (err, "keep the standard input in a temporary file");
          done += (size_t)w;
        }
    }
  s->len += n;
  return 0;
}

ssize_t
csr_stdin_fill (struct csr_stdin *s, csr_error **err)
{
  if (s->src < 0)
    return 0;
  char buf[READ_CHUNK];
  ssize_t r;
  do
    r = read (s->src, buf, sizeof buf);
  while (r < 0 && errno == EINTR);
  if (r < 0 && errno == EAGAIN)
    return 0;
  if (r <= 0)
    {
      s->src = -1;
      return 0;
    }
  size_t n = (size_t)r;
  if (s->len + n > s->max)
    {
      /* Past the cap: the snippet sees end-of-file there; the rest is never read. */
      n = (size_t)(s->max - s->len);
      s->truncated = true;
      s->src = -1;
    }
  if (n > 0 && store (s, buf, n, err) < 0)
    return -1;
  return (ssize_t)n;
}

ssize_t
csr_stdin_get (const struct csr_stdin *s, uint64_t pos, char *buf, size_t len, csr_error **err)
{
  if (pos >= s->len)
    return 0;
  if (len > s->len - pos)
    len = (size_t)(s->len - pos);
  if (pos < s->mem_len)
    {
      size_t n = s->mem_len - (size_t)pos < len ? s->mem_len - (size_t)pos : len;
      memcpy (buf, s->mem + pos, n);
      return (ssize_t)n;
    }
  ssize_t r;
  do
    r = pread (s->spill, buf, len, (off_t)(pos - s->mem_len));
  while (r < 0 && errno == EINTR);
  if (r <= 0)
    return csr_error_errno (err, "read the kept standard input back");
  return r;
}

int
csr_stdin_feed_poll_fd (const struct csr_stdin_feed *f, short *events)
{
  if (f->fd < 0)
    return -1;
  if (f->want_source && f->store->src >= 0)
    {
      *events = POLLIN;
      return f->store->src;
    }
  *events = POLLOUT;
  return f->fd;
}

static void
close_pipe (struct csr_stdin_feed *f)
{
  if (f->fd >= 0)
    close (f->fd);
  f->fd = -1;
}

int
csr_stdin_feed_step (struct csr_stdin_feed *f, short revents, csr_error **err)
{
  struct csr_stdin *s = f->store;
  if (f->want_source && s->src >= 0)
    {
      if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return 0;
      if (csr_stdin_fill (s, err) < 0)
        return -1;
      f->want_source = false;
      if (f->pos == s->len && s->src < 0)
        close_pipe (f); /* the end of the input */
      return 0;
    }
  if (revents & POLLERR)
    {
      close_pipe (f);
      return 0;
    }
  if (!(revents & POLLOUT))
    return 0;
  if (f->pos == s->len)
    {
      if (s->src < 0)
        close_pipe (f);
      else
        f->want_source = true;
      return 0;
    }
  char buf[READ_CHUNK];
  ssize_t n = csr_stdin_get (s, f->pos, buf, sizeof buf, err);
  if (n < 0)
    return -1;
  ssize_t w;
  do
    w = write (f->fd, buf, (size_t)n);
  while (w < 0 && errno == EINTR);
  if (w < 0 && errno == EAGAIN)
    return 0;
  if (w < 0)
    {
      close_pipe (f); /* EPIPE (no reader left): stop feeding */
      return 0;
    }
  f->pos += (uint64_t)w;
  if (f->pos == s->len && s->src < 0)
    close_pipe (f);
  return 0;
}

void
csr_stdin_feed_close (struct csr_stdin_feed *f)
{
  int left = 0;
  if (f->peek < 0 || ioctl (f->peek, FIONREAD, &left) < 0 || left < 0)
    left = 0;
  f->consumed = f->pos - ((uint64_t)left < f->pos ? (uint64_t)left : f->pos);
  close_pipe (f);
  if (f->peek >= 0)
    close (f->peek);
  f->peek = -1;
}
