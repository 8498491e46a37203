#include "config.h"
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../jail/jail.h"
#include "../util/clock.h"
#include "../util/cleanup.h"
#include "../util/termsafe.h"

/* After the jail's init is gone every writer is gone too; this only bounds the
 * wait for the kernel to finish tearing the pid namespace down. */
#define DRAIN_MS 2000
#define CHUNK (64 * 1024)
/* After a timeout, how long init gets to report the killed payload. */
#define KILL_GRACE_MS 1000

static void
stream_out (int fd, const char *data, size_t len)
{
  while (fd >= 0 && len > 0)
    {
      ssize_t w = write (fd, data, len);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return; /* the reader went away: keep capturing, stop streaming */
      data += w;
      len -= (size_t)w;
    }
}

static void print_piece (int fd, const char *data, size_t len, bool safe, int *last);

/* Live and neutralised, a UTF-8 character cut between two reads would show
 * as \xNN bytes: its first bytes wait for the next read (at most 3). */
struct live_carry
{
  char b[4];
  size_t n;
};

/* One stream of the payload: its pipe, what is kept, where it goes live. */
struct stream
{
  int *fd;
  struct csr_bbuf *b;
  enum csr_stream id;
  int passthrough;
  bool termsafe;
  struct live_carry *carry;
};

/* How many bytes at the end of S[0..LEN) start a UTF-8 character that is
 * not complete yet (0-3). */
static size_t
incomplete_utf8 (const char *s, size_t len)
{
  for (size_t k = 1; k <= 3 && k <= len; k++)
    {
      unsigned char c = (unsigned char)s[len - k];
      if ((c & 0xc0) == 0x80)
        continue; /* a continuation byte: look further back */
      size_t need = c >= 0xf0 && c <= 0xf4  ? 4
                    : c >= 0xe0 && c < 0xf0 ? 3
                    : c >= 0xc2 && c < 0xe0 ? 2
                                            : 1;
      return k < need ? k : 0;
    }
  return 0;
}

/* Stream DATA live to the stream's terminal or file. */
static void
stream_live (const struct stream *st, const char *data, size_t len)
{
  int last = -1;
  if (!st->termsafe || st->carry == NULL)
    {
      print_piece (st->passthrough, data, len, st->termsafe, &last);
      return;
    }
  struct live_carry *c = st->carry;
  char joined[CHUNK + sizeof c->b];
  size_t n = c->n;
  memcpy (joined, c->b, n);
  memcpy (joined + n, data, len);
  n += len;
  size_t keep = incomplete_utf8 (joined, n);
  memcpy (c->b, joined + n - keep, keep);
  c->n = keep;
  print_piece (st->passthrough, joined, n - keep, true, &last);
}

/* The end of the live stream: what waited for the rest of a character. */
static void
flush_carry (int fd, struct live_carry *c)
{
  int last = -1;
  if (fd >= 0 && c->n > 0)
    print_piece (fd, c->b, c->n, true, &last);
  c->n = 0;
}

/* Read what is available on the stream's pipe into its buffer (and the
 * order into SEQ); close it at EOF. */
static void
pump (const struct stream *st, struct csr_outseq *seq)
{
  int *fd = st->fd;
  struct csr_bbuf *b = st->b;
  char buf[CHUNK];
  for (int i = 0; i < 16; i++)
    {
      ssize_t r = read (*fd, buf, sizeof buf);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return;
      if (r <= 0)
        {
          close (*fd);
          *fd = -1;
          return;
        }
      csr_outseq_add (seq, st->id, b->total, (uint64_t)r);
      size_t head = csr_bbuf_append (b, buf, (size_t)r);
      if (st->passthrough >= 0 && head > 0)
        stream_live (st, buf, head);
    }
}

/* Write DATA to FD, rendered by csr_termsafe when SAFE; remember its last byte. */
static void
print_piece (int fd, const char *data, size_t len, bool safe, int *last)
{
  if (len == 0)
    return;
  if (!safe || csr_termsafe_clean (data, len)) /* plain text: no copy */
    {
      stream_out (fd, data, len);
      *last = (unsigned char)data[len - 1];
      return;
    }
  size_t n = 0;
  cleanup_free char *r = csr_termsafe (data, len, &n);
  if (r == NULL) /* never the raw bytes instead */
    {
      static const char oom[] = "\n[... csrun: out of memory rendering the output ...]\n";
      stream_out (fd, oom, sizeof oom - 1);
      *last = '\n';
      return;
    }
  stream_out (fd, r, n);
  if (n > 0)
    *last = (unsigned char)r[n - 1];
}

/* The "[... csrun: N bytes dropped ...]" line, when B dropped bytes. */
static void
print_marker (int fd, const struct csr_bbuf *b, int *last)
{
  if (csr_bbuf_dropped (b) == 0)
    return;
  char marker[96];
  int n = snprintf (marker, sizeof marker, "\n[... csrun: %llu bytes dropped ...]\n",
                    (unsigned long long)csr_bbuf_dropped (b));
  print_piece (fd, marker, (size_t)n, false, last);
}

/* The marker and the tail (the head was streamed live), or everything. */
static int
print_rest (int fd, const struct csr_bbuf *b, bool termsafe, int last)
{
  if (fd < 0)
    return last;
  print_marker (fd, b, &last);
  size_t len;
  cleanup_free char *t = csr_bbuf_tail (b, &len);
  if (t)
    print_piece (fd, t, len, termsafe, &last);
  return last;
}

static void
stream_tail (int fd, const struct csr_bbuf *b, bool termsafe)
{
  print_rest (fd, b, termsafe, -1);
}

int
csr_capture_print (int fd, const struct csr_bbuf *b, bool termsafe)
{
  int last = -1;
  print_piece (fd, b->head, b->head_len, termsafe, &last);
  return print_rest (fd, b, termsafe, last);
}

struct ordered_print
{
  int fd[2];
  bool safe[2];
  int last[2];
};

static void
ordered_piece (void *data, enum csr_stream s, const char *bytes, uint64_t len)
{
  struct ordered_print *p = data;
  if (p->fd[s] < 0)
    return;
  if (bytes)
    {
      print_piece (p->fd[s], bytes, (size_t)len, p->safe[s], &p->last[s]);
      return;
    }
  char marker[96];
  int n = snprintf (marker, sizeof marker, "%s[... csrun: %llu bytes dropped ...]\n",
                    p->last[s] >= 0 && p->last[s] != '\n' ? "\n" : "", (unsigned long long)len);
  print_piece (p->fd[s], marker, (size_t)n, false, &p->last[s]);
}

void
csr_capture_print_ordered (const struct csr_attempt *a, int out_fd, int err_fd, bool safe_out,
                           bool safe_err, int *out_last, int *err_last)
{
  struct ordered_print p = { { out_fd, err_fd }, { safe_out, safe_err }, { -1, -1 } };
  /* The walk fails (ENOMEM) only before its first piece. */
  if (a->seq.head == NULL || csr_outseq_walk (&a->seq, &a->out, &a->err, ordered_piece, &p) < 0)
    {
      /* No order recorded (or no memory to walk it): one stream after the other. */
      p.last[0] = out_fd >= 0 ? csr_capture_print (out_fd, &a->out, safe_out) : -1;
      p.last[1] = err_fd >= 0 ? csr_capture_print (err_fd, &a->err, safe_err) : -1;
    }
  *out_last = p.last[0];
  *err_last = p.last[1];
}

static int
make_pipe (int p[2], csr_error **err)
{
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  if (fcntl (p[0], F_SETFL, O_NONBLOCK) < 0)
    return csr_error_errno (err, "fcntl O_NONBLOCK");
  return 0;
}

/* The stdin pipe: the payload's end blocks as usual, ours doesn't; we keep
 * a copy of the read end to count what the payload left unread. */
static int
open_feed (struct csr_stdin_feed *f, struct jail_snippet *s, csr_error **err)
{
  int p[2];
  if (pipe2 (p, O_CLOEXEC) < 0)
    return csr_error_errno (err, "pipe");
  if (fcntl (p[1], F_SETFL, O_NONBLOCK) < 0)
    {
      close (p[0]);
      close (p[1]);
      return csr_error_errno (err, "fcntl O_NONBLOCK");
    }
  f->peek = p[0];
  f->fd = p[1];
  s->stdin_fd = p[0];
  return 0;
}

#define VERDICT_MAX (256 * 1024)

/* Read what is available of the verdict pipe; close it at EOF or when full. */
static void
pump_verdict (int *fd, char *buf, size_t *len)
{
  for (;;)
    {
      ssize_t r = read (*fd, buf + *len, VERDICT_MAX - *len);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0 && errno == EAGAIN)
        return;
      if (r <= 0 || (*len += (size_t)r) >= VERDICT_MAX)
        {
          close (*fd);
          *fd = -1;
          return;
        }
    }
}

/* The pipes the jail writes: its stdout, stderr and (gated) the verdict;
 * each is closed and set to -1 at EOF. */
struct capture_io
{
  int *out, *err, *ver;
  char *vbuf; /* VERDICT_MAX + 1 bytes when ver is open */
  size_t *vlen;
  struct csr_stdin_feed *feed; /* NULL: stdin is /dev/null */
  struct live_carry *carry;    /* [2]: stdout's and stderr's */
};

/* The interrupt fd is readable: which signal (SIGINT when the byte is not one). */
static int
read_interrupt (int fd)
{
  unsigned char sig = 0;
  ssize_t r;
  do
    r = read (fd, &sig, 1);
  while (r < 0 && errno == EINTR);
  return r == 1 && sig > 0 ? sig : SIGINT;
}

/* Collect the jail's output until it exited and the pipes are drained (or
 * DRAIN_MS after the exit), killing it at the attempt's timeout.  *EX: how
 * it ended.  -1 on a poll or wait failure (the caller releases the jail). */
static int
watch (const struct csr_launcher *L, struct csr_launched *p, const struct csr_capture_opts *o,
       struct csr_attempt *a, const struct capture_io *io, uint64_t start, struct csr_jail_exit *ex,
       csr_error **err)
{
  uint64_t deadline = o->timeout_s > 0 ? start + (uint64_t)(o->timeout_s * 1000.0) : 0;
  uint64_t drain_until = 0;
  bool reaped = false;
  while (!reaped || *io->out >= 0 || *io->err >= 0 || *io->ver >= 0)
    {
      uint64_t now = (uint64_t)csr_mono_ms ();
      if (!reaped && deadline && now >= deadline && !a->timed_out && !a->interrupted)
        {
          /* Kill the payload first so init can account for it; init and
           * everything else follow when init sees it die. */
          a->timed_out = true;
          if (L->kill_payload (p) == 0)
            L->kill (p);
          deadline = now + KILL_GRACE_MS;
        }
      else if (!reaped && (a->timed_out || a->interrupted) && deadline && now >= deadline)
        {
          L->kill (p);
          deadline = 0;
        }
      if (reaped && now >= drain_until)
        break;
      struct pollfd pfd[6];
      int n = 0, i_out = -1, i_err = -1, i_pid = -1, i_ver = -1, i_in = -1, i_int = -1;
      short in_events = 0;
      int in_fd = io->feed && !reaped ? csr_stdin_feed_poll_fd (io->feed, &in_events) : -1;
      if (in_fd >= 0)
        {
          i_in = n;
          pfd[n++] = (struct pollfd){ .fd = in_fd, .events = in_events };
        }
      if (!reaped && !a->interrupted && o->interrupt_fd >= 0)
        {
          i_int = n;
          pfd[n++] = (struct pollfd){ .fd = o->interrupt_fd, .events = POLLIN };
        }
      if (*io->ver >= 0)
        {
          i_ver = n;
          pfd[n++] = (struct pollfd){ .fd = *io->ver, .events = POLLIN };
        }
      if (*io->out >= 0)
        {
          i_out = n;
          pfd[n++] = (struct pollfd){ .fd = *io->out, .events = POLLIN };
        }
      if (*io->err >= 0)
        {
          i_err = n;
          pfd[n++] = (struct pollfd){ .fd = *io->err, .events = POLLIN };
        }
      if (!reaped && p->exit_fd >= 0)
        {
          i_pid = n;
          pfd[n++] = (struct pollfd){ .fd = p->exit_fd, .events = POLLIN };
        }
      int timeout = -1;
      if (reaped)
        timeout = (int)(drain_until - now);
      else if (p->exit_fd < 0)
        timeout = 20; /* no pidfd: poll for the exit */
      if (!reaped && deadline)
        {
          int left = (int)(deadline - now);
          timeout = timeout < 0 || left < timeout ? left : timeout;
        }
      int r = poll (pfd, (nfds_t)n, timeout);
      if (r < 0 && errno != EINTR)
        return csr_error_errno (err, "poll");
      if (i_ver >= 0 && (pfd[i_ver].revents & (POLLIN | POLLHUP | POLLERR)))
        pump_verdict (io->ver, io->vbuf, io->vlen);
      if (i_out >= 0 && (pfd[i_out].revents & (POLLIN | POLLHUP | POLLERR)))
        pump (&(struct stream){ io->out, &a->out, CSR_STREAM_OUT, o->passthrough_out,
                                o->passthrough_termsafe_out, &io->carry[0] },
              &a->seq);
      if (i_err >= 0 && (pfd[i_err].revents & (POLLIN | POLLHUP | POLLERR)))
        pump (&(struct stream){ io->err, &a->err, CSR_STREAM_ERR, o->passthrough_err,
                                o->passthrough_termsafe_err, &io->carry[1] },
              &a->seq);
      if (i_in >= 0 && pfd[i_in].revents
          && csr_stdin_feed_step (io->feed, pfd[i_in].revents, err) < 0)
        return -1;
      if (i_int >= 0 && (pfd[i_int].revents & POLLIN) && !reaped)
        {
          /* Interrupted: stop the jail as at a timeout (no grace for the snippet). */
          a->interrupted = read_interrupt (o->interrupt_fd);
          if (L->kill_payload (p) == 0)
            L->kill (p);
          deadline = (uint64_t)csr_mono_ms () + KILL_GRACE_MS;
        }
      bool exited = i_pid >= 0 && (pfd[i_pid].revents & (POLLIN | POLLHUP | POLLERR));
      if (!reaped && p->exit_fd < 0)
        exited = L->ended (p);
      if (exited)
        {
          if (L->wait (p, ex, err) < 0)
            return -1;
          reaped = true;
          a->duration_ms = (uint64_t)csr_mono_ms () - start;
          drain_until = (uint64_t)csr_mono_ms () + DRAIN_MS;
        }
    }
  return 0;
}

int
csr_capture_run (const struct jail_snippet *spec, const struct csr_capture_opts *o,
                 struct csr_attempt *a, csr_error **err)
{
  return csr_capture_run_gated (spec, o, a, NULL, NULL, err);
}

int
csr_capture_run_gated (const struct jail_snippet *spec, const struct csr_capture_opts *o,
                       struct csr_attempt *a, char **verdict, size_t *verdict_len, csr_error **err)
{
  struct csr_launch_req r = { .spec = spec };
  if (spec->n_files > 0)
    {
      r.code = spec->files[0].data;
      r.code_len = spec->files[0].len;
    }
  return csr_capture_run_attempt (&r, o, a, verdict, verdict_len, err);
}

/* How the attempt's limits are enforced: its own cgroup (one-shot), or the
 * launcher's target's (a sandbox's), or none. */
static int
limits_prepare (const struct csr_launcher *L, const struct csr_capture_opts *o,
                struct jail_snippet *s, struct csr_attempt *a, csr_error **err)
{
  if (!L->one_shot)
    {
      if (L->applied)
        a->limits = *L->applied;
      else
        snprintf (a->limits.mechanism, sizeof a->limits.mechanism, "none");
      a->limits.cg = NULL;
      return 0;
    }
  if (o->limits)
    return csr_limits_prepare (o->limits, s, &a->limits, err);
  snprintf (a->limits.mechanism, sizeof a->limits.mechanism, "none");
  return 0;
}

int
csr_capture_run_attempt (const struct csr_launch_req *r, const struct csr_capture_opts *o,
                         struct csr_attempt *a, char **verdict, size_t *verdict_len,
                         csr_error **err)
{
  const struct csr_launcher *L = o->launcher ? o->launcher : &csr_launcher_jail;
  const struct jail_snippet *spec = r->spec;
  if (csr_bbuf_init (&a->out, o->max_output) < 0 || csr_bbuf_init (&a->err, o->max_output) < 0
      || csr_outseq_init (&a->seq) < 0)
    return csr_error_set (err, ENOMEM, "allocate output buffers");
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 };
  if (make_pipe (po, err) < 0 || make_pipe (pe, err) < 0)
    {
      for (int i = 0; i < 2; i++)
        {
          if (po[i] >= 0)
            close (po[i]);
          if (pe[i] >= 0)
            close (pe[i]);
        }
      return -1;
    }
  cleanup_close int out_r = po[0];
  cleanup_close int err_r = pe[0];
  cleanup_close int ver_r = -1;
  cleanup_close int ver_w = -1;
  cleanup_free char *vbuf = NULL;
  size_t vlen = 0;
  struct jail_snippet s = *spec;
  s.stdout_fd = po[1];
  s.stderr_fd = pe[1];
  /* The payload's stdin: a pipe fed from the kept input (issue 14). */
  struct csr_stdin_feed feed = { .store = o->stdin_store, .fd = -1, .peek = -1 };
  if (o->stdin_store && open_feed (&feed, &s, err) < 0)
    {
      close (po[1]);
      close (pe[1]);
      return -1;
    }
  if (verdict)
    {
      int pv[2];
      vbuf = malloc (VERDICT_MAX + 1);
      if (vbuf == NULL || make_pipe (pv, err) < 0)
        {
          close (po[1]);
          close (pe[1]);
          csr_stdin_feed_close (&feed);
          return vbuf ? -1 : csr_error_set (err, ENOMEM, "allocate the verdict buffer");
        }
      ver_r = pv[0];
      ver_w = pv[1];
      /* The verdict pipe is fd 3; the caller's extra fds follow it. */
      s.extra_fds[0] = ver_w;
      if (s.n_extra_fds == 0)
        s.n_extra_fds = 1;
    }

  if (limits_prepare (L, o, &s, a, err) < 0)
    {
      close (po[1]);
      close (pe[1]);
      csr_stdin_feed_close (&feed);
      return -1;
    }
  uint64_t start = (uint64_t)csr_mono_ms ();
  struct csr_launched p
      = { .exit_fd = -1, .jail = { .pid = -1, .pidfd = -1, .syncfd = -1 }, .sock = -1 };
  struct csr_launch_req rq = *r;
  rq.spec = &s;
  int rc = L->start (L, &rq, &p, err);
  close (po[1]);
  close (pe[1]);
  if (ver_w >= 0)
    close (steal_fd (&ver_w));
  if (rc < 0)
    {
      csr_stdin_feed_close (&feed);
      csr_limits_finish (&a->limits, NULL);
      return -1;
    }

  struct csr_jail_exit ex;
  memset (&ex, 0, sizeof ex);
  struct live_carry carry[2] = { { .n = 0 }, { .n = 0 } };
  const struct capture_io io
      = { &out_r, &err_r, &ver_r, vbuf, &vlen, o->stdin_store ? &feed : NULL, carry };
  if (watch (L, &p, o, a, &io, start, &ex, err) < 0)
    {
      csr_stdin_feed_close (&feed);
      L->release (&p);
      csr_limits_finish (&a->limits, NULL);
      return -1;
    }
  L->release (&p);
  if (o->stdin_store)
    {
      csr_stdin_feed_close (&feed);
      a->stdin_given = true;
      a->stdin_consumed = feed.consumed;
    }
  struct csr_cgroup_stats cst;
  csr_limits_finish (&a->limits, &cst);
  flush_carry (o->passthrough_out, &carry[0]);
  flush_carry (o->passthrough_err, &carry[1]);
  stream_tail (o->passthrough_out, &a->out, o->passthrough_termsafe_out);
  stream_tail (o->passthrough_err, &a->err, o->passthrough_termsafe_err);
  a->exited = ex.exited;
  a->exit_code = ex.exit_code;
  a->signal = ex.signal;
  a->cpu_ms = ex.cpu_us / 1000;
  a->peak_memory_kib = ex.maxrss_kib;
  /* The cgroup sees every process of the jail, also those init never reaped. */
  if (cst.memory_peak / 1024 > a->peak_memory_kib)
    a->peak_memory_kib = cst.memory_peak / 1024;
  if (cst.cpu_usec / 1000 > a->cpu_ms)
    a->cpu_ms = cst.cpu_usec / 1000;
  a->oom_killed = cst.oom_killed;
  if (verdict)
    {
      vbuf[vlen] = '\0';
      *verdict = steal_pointer (&vbuf);
      if (verdict_len)
        *verdict_len = vlen;
    }
  return 0;
}
