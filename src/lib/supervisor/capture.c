#include "config.h"
#include "capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../cgroup/cgroup.h"
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
  bool *ended;                 /* non-NULL: stop at the gate's "end" line (set true then) */
};

/* A verdict line, then a whole "end ..." line (see csr_capture_run_kept)? */
static bool
has_end (const char *buf, size_t len)
{
  const char *nl = memchr (buf, '\n', len);
  if (nl == NULL)
    return false;
  size_t rest = len - (size_t)(nl + 1 - buf);
  return rest >= 5 && memcmp (nl + 1, "end ", 4) == 0 && memchr (nl + 1, '\n', rest) != NULL;
}

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
        {
          pump_verdict (io->ver, io->vbuf, io->vlen);
          /* (Not once the payload is being killed: its end is awaited.) */
          if (io->ended && !reaped && !a->timed_out && !a->interrupted
              && has_end (io->vbuf, *io->vlen))
            {
              *io->ended = true;
              return 0;
            }
        }
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

/* ---- one launched attempt, its pipes and its cgroup, for one attempt or
 * (issue 17) several whose code did not run (see capture.h). */
struct csr_gated_jail
{
  const struct csr_launcher *L;
  struct csr_launched p;   /* the one-shot jail, or the exec in a sandbox */
  int out_r, err_r, ver_r; /* -1 once closed */
  int next_fd;             /* the gate's fd 6 (a socket), -1: none */
  char *vbuf;              /* VERDICT_MAX + 1 bytes when ver_r is open */
  size_t vlen;
  struct csr_stdin_feed feed;
  bool has_feed;
  struct live_carry carry[2];
  struct csr_limits_applied limits; /* owns the cgroup (a one-shot jail's) */
  uint64_t cpu_used_us;             /* what the earlier attempts in this jail used */
};

/* After an "end" line: what is still in the stdout and stderr pipes was
 * written before it (the gate flushed both first). */
static void
drain_now (const struct capture_io *io, const struct csr_capture_opts *o, struct csr_attempt *a)
{
  for (int k = 0; k < 2; k++)
    {
      int *fd = k == 0 ? io->out : io->err;
      struct stream st = { fd,
                           k == 0 ? &a->out : &a->err,
                           k == 0 ? CSR_STREAM_OUT : CSR_STREAM_ERR,
                           k == 0 ? o->passthrough_out : o->passthrough_err,
                           k == 0 ? o->passthrough_termsafe_out : o->passthrough_termsafe_err,
                           &io->carry[k] };
      struct pollfd p = { .fd = *fd, .events = POLLIN };
      while (*fd >= 0 && poll (&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP | POLLERR)))
        {
          pump (&st, &a->seq);
          p.fd = *fd;
        }
    }
}

/* The gate's "end STATUS CPU_NS HWM_KIB" line after the verdict line in
 * BUF: true with the values (the verdict line's length in *VLEN). */
static bool
parse_end (const char *buf, size_t len, size_t *vlen, int *status, uint64_t *cpu_ns,
           uint64_t *hwm_kib)
{
  const char *nl = memchr (buf, '\n', len);
  if (nl == NULL)
    return false;
  const char *e = nl + 1;
  size_t rest = len - (size_t)(e - buf);
  const char *enl = memchr (e, '\n', rest);
  if (enl == NULL || rest < 5 || memcmp (e, "end ", 4) != 0)
    return false;
  char line[96];
  size_t l = (size_t)(enl - e);
  if (l >= sizeof line)
    return false;
  memcpy (line, e, l);
  line[l] = '\0';
  unsigned long long c = 0, h = 0;
  int st = 0;
  if (sscanf (line, "end %d %llu %llu", &st, &c, &h) != 3 || st < 0 || st > 255)
    return false;
  *vlen = (size_t)(nl - buf);
  *status = st;
  *cpu_ns = c;
  *hwm_kib = h;
  return true;
}

/* Watch G's attempt A (started at START): 1 when the gate ended the
 * attempt and waits for more (*END_STATUS, *CPU_NS, *HWM_KIB, the verdict
 * line's length in *VLEN), 0 when the payload exited (*EX), -1 on a csrun
 * error. */
static int
watch_gated (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct csr_attempt *a,
             uint64_t start, struct csr_jail_exit *ex, int *end_status, uint64_t *cpu_ns,
             uint64_t *hwm_kib, size_t *vlen, csr_error **err)
{
  bool ended = false;
  const struct capture_io io = { &g->out_r, &g->err_r,
                                 &g->ver_r, g->vbuf,
                                 &g->vlen,  g->has_feed ? &g->feed : NULL,
                                 g->carry,  g->next_fd >= 0 ? &ended : NULL };
  if (watch (g->L, &g->p, o, a, &io, start, ex, err) < 0)
    return -1;
  if (!ended)
    return 0;
  if (!parse_end (g->vbuf, g->vlen, vlen, end_status, cpu_ns, hwm_kib))
    return csr_error_set (err, 0, "the gate's end of attempt can't be read");
  drain_now (&io, o, a);
  return 1;
}

/* The end of an attempt in G: the live streams' rest, the verdict. */
static void
finish_streams (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct csr_attempt *a)
{
  flush_carry (o->passthrough_out, &g->carry[0]);
  flush_carry (o->passthrough_err, &g->carry[1]);
  stream_tail (o->passthrough_out, &a->out, o->passthrough_termsafe_out);
  stream_tail (o->passthrough_err, &a->err, o->passthrough_termsafe_err);
}

static void
hand_verdict (struct csr_gated_jail *g, size_t len, char **verdict, size_t *verdict_len)
{
  if (verdict == NULL)
    return;
  g->vbuf[len] = '\0';
  *verdict = strndup (g->vbuf, len);
  if (*verdict == NULL)
    *verdict = strdup ("");
  if (verdict_len)
    *verdict_len = *verdict ? strlen (*verdict) : 0;
}

/* Attempt A ended in G's live jail: its figures (the gate's own, or the
 * cgroup's: nothing else ran in the jail), and a verdict for the caller. */
static void
attempt_ended (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct csr_attempt *a,
               uint64_t start, int status, uint64_t cpu_ns, uint64_t hwm_kib, size_t vlen,
               char **verdict, size_t *verdict_len)
{
  finish_streams (g, o, a);
  a->exited = true;
  a->exit_code = status;
  a->duration_ms = (uint64_t)csr_mono_ms () - start;
  a->limits = g->limits;
  a->limits.cg = NULL;          /* G's */
  a->stdin_given = g->has_feed; /* and nothing of it read: nothing ran */
  a->stdin_consumed = 0;
  uint64_t used_us = cpu_ns / 1000;
  a->peak_memory_kib = hwm_kib;
  struct csr_cgroup_stats cst;
  csr_error *e = NULL;
  if (g->limits.cg && csr_cgroup_stats (g->limits.cg, &cst, &e) == 0)
    {
      if (cst.cpu_usec > used_us)
        used_us = cst.cpu_usec;
      if (cst.memory_peak / 1024 > a->peak_memory_kib)
        a->peak_memory_kib = cst.memory_peak / 1024;
    }
  csr_error_free (e);
  a->cpu_ms = (used_us > g->cpu_used_us ? used_us - g->cpu_used_us : 0) / 1000;
  g->cpu_used_us = used_us > g->cpu_used_us ? used_us : g->cpu_used_us;
  hand_verdict (g, vlen, verdict, verdict_len);
  /* The verdict pipe starts empty for the next attempt. */
  g->vlen = 0;
}

/* The payload exited: A's figures, everything of G released but VBUF. */
static void
jail_exited (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct csr_attempt *a,
             const struct csr_jail_exit *ex)
{
  g->L->release (&g->p);
  if (g->has_feed)
    {
      csr_stdin_feed_close (&g->feed);
      a->stdin_given = true;
      a->stdin_consumed = g->feed.consumed;
      g->has_feed = false;
    }
  struct csr_cgroup_stats cst;
  a->limits = g->limits;
  csr_limits_finish (&g->limits, &cst);
  a->limits.cg = NULL;
  finish_streams (g, o, a);
  a->exited = ex->exited;
  a->exit_code = ex->exit_code;
  a->signal = ex->signal;
  a->peak_memory_kib = ex->maxrss_kib;
  /* The cgroup sees every process of the jail, also those init never reaped. */
  if (cst.memory_peak / 1024 > a->peak_memory_kib)
    a->peak_memory_kib = cst.memory_peak / 1024;
  uint64_t used_us = ex->cpu_us > cst.cpu_usec ? ex->cpu_us : cst.cpu_usec;
  a->cpu_ms = (used_us > g->cpu_used_us ? used_us - g->cpu_used_us : 0) / 1000;
  a->oom_killed = cst.oom_killed;
}

static void
gated_close (struct csr_gated_jail *g)
{
  int *fds[] = { &g->out_r, &g->err_r, &g->ver_r, &g->next_fd };
  for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
    if (*fds[i] >= 0)
      {
        close (*fds[i]);
        *fds[i] = -1;
      }
  free (g->vbuf);
  g->vbuf = NULL;
}

void
csr_capture_drop (struct csr_gated_jail *g)
{
  if (g == NULL)
    return;
  /* Nothing of the snippet ran: the gate waits on its fd 6; no reason to
   * wait for it to see the end of it (a one-shot jail is killed and
   * reaped; a sandbox's keeper kills an exec whose connection closes). */
  g->L->release (&g->p);
  if (g->has_feed)
    csr_stdin_feed_close (&g->feed);
  csr_limits_finish (&g->limits, NULL);
  gated_close (g);
  free (g);
}

_Static_assert(CSR_LAUNCH_FD_NEXT - 3 < CSR_MAX_EXTRA_FDS,
               "a jail's extra fds reach the next attempt's socket");

/* The pipes of a gated attempt and SPEC's copy *S with them: stdout,
 * stderr, the verdict (fd 3, if WITH_VERDICT) and, if KEEP, the next
 * attempt's socket (fd 6; launcher.h has the layout). */
static int
gated_pipes (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct jail_snippet *s,
             bool with_verdict, bool keep, int child[4], csr_error **err)
{
  int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pv[2] = { -1, -1 }, sn[2] = { -1, -1 };
  if (make_pipe (po, err) < 0 || make_pipe (pe, err) < 0
      || (with_verdict && make_pipe (pv, err) < 0))
    goto fail;
  if (keep && socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sn) < 0)
    {
      csr_error_errno (err, "socketpair");
      goto fail;
    }
  if (with_verdict && (g->vbuf = malloc (VERDICT_MAX + 1)) == NULL)
    {
      csr_error_set (err, ENOMEM, "allocate the verdict buffer");
      goto fail;
    }
  g->out_r = po[0];
  g->err_r = pe[0];
  g->ver_r = pv[0];
  g->next_fd = sn[0];
  child[0] = s->stdout_fd = po[1];
  child[1] = s->stderr_fd = pe[1];
  child[2] = pv[1];
  child[3] = sn[1];
  if (with_verdict)
    {
      /* The verdict pipe is fd 3; the caller's extra fds follow it (fd 4:
       * the gate's code), then fd 6 for the next code (fd 5 is a sandbox
       * exec's snippet, none here). */
      s->extra_fds[CSR_LAUNCH_FD_VERDICT - 3] = pv[1];
      if (s->n_extra_fds == 0)
        s->n_extra_fds = 1;
      if (keep)
        {
          for (size_t i = s->n_extra_fds; i < CSR_LAUNCH_FD_NEXT - 3; i++)
            s->extra_fds[i] = -1;
          s->extra_fds[CSR_LAUNCH_FD_NEXT - 3] = sn[1];
          s->n_extra_fds = CSR_LAUNCH_FD_NEXT - 3 + 1;
        }
    }
  /* The payload's stdin: a pipe fed from the kept input (issue 14). */
  g->feed = (struct csr_stdin_feed){ .store = o->stdin_store, .fd = -1, .peek = -1 };
  if (o->stdin_store)
    {
      if (open_feed (&g->feed, s, err) < 0)
        goto fail_after;
      g->has_feed = true;
    }
  return 0;
fail:
  for (int i = 0; i < 2; i++)
    {
      int *p[] = { po, pe, pv, sn };
      for (size_t k = 0; k < 4; k++)
        if (p[k][i] >= 0)
          close (p[k][i]);
    }
  free (g->vbuf);
  g->vbuf = NULL;
  g->out_r = g->err_r = g->ver_r = g->next_fd = -1;
  return -1;
fail_after:
  for (int i = 0; i < 4; i++)
    if (child[i] >= 0)
      close (child[i]);
  gated_close (g);
  return -1;
}

/* How the attempt's limits are enforced: its own cgroup (one-shot), or the
 * launcher's target's (a sandbox's), or none. */
static int
limits_prepare (const struct csr_launcher *L, const struct csr_capture_opts *o,
                struct jail_snippet *s, struct csr_limits_applied *limits, csr_error **err)
{
  if (!L->one_shot)
    {
      if (L->applied)
        *limits = *L->applied;
      else
        snprintf (limits->mechanism, sizeof limits->mechanism, "none");
      limits->cg = NULL;
      return 0;
    }
  if (o->limits)
    return csr_limits_prepare (o->limits, s, limits, err);
  snprintf (limits->mechanism, sizeof limits->mechanism, "none");
  return 0;
}

/* Start attempt A (R) with O's launcher: *G on success (it runs). */
static int
gated_start (const struct csr_launch_req *r, const struct csr_capture_opts *o,
             struct csr_attempt *a, bool with_verdict, bool keep, struct csr_gated_jail **out,
             uint64_t *start, csr_error **err)
{
  *out = NULL;
  struct csr_gated_jail *g = calloc (1, sizeof *g);
  if (g == NULL)
    return csr_error_set (err, ENOMEM, "allocate a jail");
  g->L = o->launcher ? o->launcher : &csr_launcher_jail;
  g->out_r = g->err_r = g->ver_r = g->next_fd = -1;
  g->p = (struct csr_launched){ .exit_fd = -1,
                                .jail = { .pid = -1, .pidfd = -1, .syncfd = -1 },
                                .sock = -1 };
  struct jail_snippet s = *r->spec;
  int child[4] = { -1, -1, -1, -1 };
  if (gated_pipes (g, o, &s, with_verdict, keep && g->L->reuse_unrun, child, err) < 0)
    {
      free (g);
      return -1;
    }
  int rc = limits_prepare (g->L, o, &s, &g->limits, err);
  *start = (uint64_t)csr_mono_ms ();
  if (rc == 0)
    {
      struct csr_launch_req rq = *r;
      rq.spec = &s;
      rc = g->L->start (g->L, &rq, &g->p, err);
      *start += g->p.waited_ms; /* a wait before the code went: not its time */
    }
  for (int i = 0; i < 4; i++)
    if (child[i] >= 0)
      close (child[i]);
  if (rc < 0)
    {
      if (g->has_feed)
        csr_stdin_feed_close (&g->feed);
      csr_limits_finish (&g->limits, NULL);
      gated_close (g);
      free (g);
      return -1;
    }
  a->limits = g->limits;
  a->limits.cg = NULL;
  a->warm_jail = g->p.warm;
  memcpy (a->warm_refused, g->p.warm_refused, sizeof a->warm_refused);
  *out = g;
  return 0;
}

/* Run attempt A in G until it ends: the payload exits (G is freed, *KEPT
 * NULL), or the gate waits for more (*KEPT = G). */
static int
gated_attempt (struct csr_gated_jail *g, const struct csr_capture_opts *o, struct csr_attempt *a,
               uint64_t start, char **verdict, size_t *verdict_len, struct csr_gated_jail **kept,
               csr_error **err)
{
  if (kept)
    *kept = NULL;
  struct csr_jail_exit ex;
  memset (&ex, 0, sizeof ex);
  int status = 0;
  uint64_t cpu_ns = 0, hwm = 0;
  size_t vlen = 0;
  int w = watch_gated (g, o, a, start, &ex, &status, &cpu_ns, &hwm, &vlen, err);
  if (w < 0)
    {
      csr_capture_drop (g);
      return -1;
    }
  if (w == 1)
    {
      attempt_ended (g, o, a, start, status, cpu_ns, hwm, vlen, verdict, verdict_len);
      if (kept)
        *kept = g;
      else
        csr_capture_drop (g);
      return 0;
    }
  jail_exited (g, o, a, &ex);
  if (verdict)
    {
      g->vbuf[g->vlen] = '\0';
      *verdict = steal_pointer (&g->vbuf);
      if (verdict_len)
        *verdict_len = g->vlen;
    }
  gated_close (g);
  free (g);
  return 0;
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
  return csr_capture_run_kept (&r, o, a, verdict, verdict_len, NULL, err);
}

int
csr_capture_run_attempt (const struct csr_launch_req *r, const struct csr_capture_opts *o,
                         struct csr_attempt *a, char **verdict, size_t *verdict_len,
                         csr_error **err)
{
  return csr_capture_run_kept (r, o, a, verdict, verdict_len, NULL, err);
}

int
csr_capture_run_kept (const struct csr_launch_req *r, const struct csr_capture_opts *o,
                      struct csr_attempt *a, char **verdict, size_t *verdict_len,
                      struct csr_gated_jail **kept, csr_error **err)
{
  if (kept)
    *kept = NULL;
  if (csr_bbuf_init (&a->out, o->max_output) < 0 || csr_bbuf_init (&a->err, o->max_output) < 0
      || csr_outseq_init (&a->seq) < 0)
    return csr_error_set (err, ENOMEM, "allocate output buffers");
  struct csr_gated_jail *g = NULL;
  uint64_t start = 0;
  bool keep = kept != NULL && verdict != NULL;
  if (gated_start (r, o, a, verdict != NULL, keep, &g, &start, err) < 0)
    return -1;
  return gated_attempt (g, o, a, start, verdict, verdict_len, keep ? kept : NULL, err);
}

/* The message on fd 6: "POLICY_LEN CODE_LEN\n", the policy, the code. */
static int
send_next (int fd, const char *policy, const char *code)
{
  char head[64];
  size_t pl = strlen (policy), cl = strlen (code);
  int hn = snprintf (head, sizeof head, "%zu %zu\n", pl, cl);
  struct iovec iov[3] = { { head, (size_t)hn }, { (void *)policy, pl }, { (void *)code, cl } };
  size_t total = (size_t)hn + pl + cl, done = 0;
  int i = 0;
  while (done < total)
    {
      struct msghdr mh = { .msg_iov = iov + i, .msg_iovlen = (size_t)(3 - i) };
      ssize_t w = sendmsg (fd, &mh, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR)
        continue;
      if (w <= 0)
        return -1;
      done += (size_t)w;
      for (size_t left = (size_t)w; left > 0 && i < 3;)
        {
          size_t take = left < iov[i].iov_len ? left : iov[i].iov_len;
          iov[i].iov_base = (char *)iov[i].iov_base + take;
          iov[i].iov_len -= take;
          left -= take;
          if (iov[i].iov_len == 0)
            i++;
        }
    }
  return 0;
}

int
csr_capture_next (struct csr_gated_jail *g, const char *policy, const char *code,
                  const struct csr_capture_opts *o, struct csr_attempt *a, char **verdict,
                  size_t *verdict_len, struct csr_gated_jail **kept, csr_error **err)
{
  if (kept)
    *kept = NULL;
  if (g->next_fd < 0 || verdict == NULL)
    return csr_error_set (err, EINVAL, "this jail takes no more code");
  if (csr_bbuf_init (&a->out, o->max_output) < 0 || csr_bbuf_init (&a->err, o->max_output) < 0
      || csr_outseq_init (&a->seq) < 0)
    return csr_error_set (err, ENOMEM, "allocate output buffers");
  /* The peak of this attempt, not of the earlier ones' gate (the gate
   * resets its own high-water mark too). */
  if (g->limits.cg)
    csr_cgroup_reset_peak (g->limits.cg);
  uint64_t start = (uint64_t)csr_mono_ms ();
  if (send_next (g->next_fd, policy, code) < 0)
    {
      /* The jail is gone (killed, or the gate failed): the caller starts a
       * new one. */
      csr_capture_drop (g);
      csr_bbuf_release (&a->out);
      csr_bbuf_release (&a->err);
      csr_outseq_release (&a->seq);
      return CSR_CAPTURE_GONE;
    }
  a->limits = g->limits;
  a->limits.cg = NULL;
  a->warm_jail = g->p.warm;
  return gated_attempt (g, o, a, start, verdict, verdict_len, kept, err);
}
