/* csrun — relaying bytes between pairs of TCP sockets (see relay.h). */
#include "config.h"
#include "relay.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define RELAY_EVENTS 64
/* Rounds of reads and writes for one pair per wake-up: a fast pair leaves
 * its turn to the others (the epoll set is level-triggered). */
#define RELAY_ROUNDS 8

struct rbuf
{
  char *d;
  size_t start, end; /* the bytes not written yet are [start, end) */
};

struct side
{
  struct csr_relay_conn *c;
  int i;
};

struct csr_relay_conn
{
  struct csr_relay_conn *prev, *next; /* the live pairs, or the ended ones */
  int fd[2];                          /* 0: A, 1: B */
  struct rbuf buf[2];                 /* buf[i]: read from fd[i], written to fd[!i] */
  bool eof[2];                        /* fd[i] has read its end */
  bool shut[2];                       /* fd[i]'s writing is shut down */
  bool connecting;                    /* fd[1]'s connect is in progress */
  bool dead;
  uint32_t ev[2]; /* the events fd[i] is in the set for; 0: not in it */
  struct side side[2];
  void *tag;
};

struct csr_relay
{
  int epfd;
  size_t max, n, size;
  csr_relay_closed_fn closed;
  void *arg;
  struct csr_relay_conn *live, *dead;
  bool running; /* in csr_relay_run: ended pairs are freed at its end */
};

struct csr_relay *
csr_relay_new (size_t max_conns, size_t buf_size, csr_relay_closed_fn closed, void *arg,
               csr_error **err)
{
  struct csr_relay *r = calloc (1, sizeof *r);
  if (r == NULL)
    {
      csr_error_set (err, ENOMEM, "relay");
      return NULL;
    }
  r->epfd = epoll_create1 (EPOLL_CLOEXEC);
  if (r->epfd < 0)
    {
      csr_error_errno (err, "epoll_create1");
      free (r);
      return NULL;
    }
  r->max = max_conns;
  r->size = buf_size;
  r->closed = closed;
  r->arg = arg;
  return r;
}

int
csr_relay_fd (const struct csr_relay *r)
{
  return r->epfd;
}

size_t
csr_relay_count (const struct csr_relay *r)
{
  return r->n;
}

static void
free_dead (struct csr_relay *r)
{
  while (r->dead)
    {
      struct csr_relay_conn *c = r->dead;
      r->dead = c->next;
      free (c->buf[0].d);
      free (c);
    }
}

static void
end_conn (struct csr_relay *r, struct csr_relay_conn *c, bool abort)
{
  if (c->dead)
    return;
  c->dead = true;
  for (int i = 0; i < 2; i++)
    {
      if (c->fd[i] < 0)
        continue;
      /* Out of the set first: a copy of the descriptor in a forked process
       * would keep it there. */
      if (c->ev[i])
        epoll_ctl (r->epfd, EPOLL_CTL_DEL, c->fd[i], NULL);
      if (abort)
        {
          /* The peer learns at once, even if a forked process still holds a
           * copy of the socket; a reset when this is the last one. */
          struct linger l = { 1, 0 };
          setsockopt (c->fd[i], SOL_SOCKET, SO_LINGER, &l, sizeof l);
          shutdown (c->fd[i], SHUT_RDWR);
        }
      close (c->fd[i]);
      c->fd[i] = -1;
    }
  if (c->prev)
    c->prev->next = c->next;
  else
    r->live = c->next;
  if (c->next)
    c->next->prev = c->prev;
  r->n--;
  c->prev = NULL;
  c->next = r->dead;
  r->dead = c;
  if (r->closed)
    r->closed (c, c->tag, r->arg);
  if (!r->running)
    free_dead (r);
}

void
csr_relay_abort (struct csr_relay *r, struct csr_relay_conn *c)
{
  end_conn (r, c, true);
}

void
csr_relay_abort_all (struct csr_relay *r)
{
  while (r->live)
    end_conn (r, r->live, true);
}

void
csr_relay_free (struct csr_relay *r)
{
  if (r == NULL)
    return;
  r->running = false;
  csr_relay_abort_all (r);
  free_dead (r);
  close (r->epfd);
  free (r);
}

static bool
has_data (const struct rbuf *b)
{
  return b->end > b->start;
}

/* Whether fd[I] can be read from or written to now. */
static bool
ready (const struct csr_relay_conn *c, int i)
{
  return c->fd[i] >= 0 && !(i == 1 && c->connecting);
}

/* Put each socket in the set for what is wanted from it, or out of it;
 * -1 when epoll_ctl fails. */
static int
update (struct csr_relay *r, struct csr_relay_conn *c)
{
  for (int i = 0; i < 2; i++)
    {
      uint32_t want = 0;
      if (c->fd[i] < 0)
        continue;
      if (i == 1 && c->connecting)
        want = EPOLLOUT;
      else
        {
          const struct rbuf *in = &c->buf[i], *out = &c->buf[!i];
          if (!c->eof[i] && (in->end < r->size || in->start > 0))
            want |= EPOLLIN;
          if (has_data (out) && !c->shut[i])
            want |= EPOLLOUT;
        }
      if (want == c->ev[i])
        continue;
      struct epoll_event ev = { .events = want, .data.ptr = &c->side[i] };
      int op = want == 0 ? EPOLL_CTL_DEL : c->ev[i] == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
      if (epoll_ctl (r->epfd, op, c->fd[i], &ev) < 0)
        return -1;
      c->ev[i] = want;
    }
  return 0;
}

static bool
transient (int e)
{
  return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/* Direction D: write buf[D] to fd[!D], read fd[D] into it, pass an end on.
 * -1: the pair failed (aborted). */
static int
move (struct csr_relay *r, struct csr_relay_conn *c, int d, bool *moved)
{
  struct rbuf *b = &c->buf[d];
  int src = c->fd[d], dst = c->fd[!d];
  if (ready (c, !d) && has_data (b) && !c->shut[!d])
    {
      ssize_t w = send (dst, b->d + b->start, b->end - b->start, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (w > 0)
        {
          b->start += (size_t)w;
          if (b->start == b->end)
            b->start = b->end = 0;
          *moved = true;
        }
      else if (w < 0 && !transient (errno))
        return -1;
    }
  if (ready (c, d) && !c->eof[d])
    {
      if (b->end == r->size && b->start > 0)
        {
          memmove (b->d, b->d + b->start, b->end - b->start);
          b->end -= b->start;
          b->start = 0;
        }
      if (b->end < r->size)
        {
          ssize_t n = recv (src, b->d + b->end, r->size - b->end, MSG_DONTWAIT);
          if (n > 0)
            b->end += (size_t)n;
          else if (n == 0)
            c->eof[d] = true;
          else if (!transient (errno))
            return -1;
          *moved = *moved || n >= 0;
        }
    }
  if (c->eof[d] && !has_data (b) && ready (c, !d) && !c->shut[!d])
    {
      /* ENOTCONN: the peer is gone; the other direction finds out. */
      shutdown (dst, SHUT_WR);
      c->shut[!d] = true;
      *moved = true;
    }
  return 0;
}

static void
pump (struct csr_relay *r, struct csr_relay_conn *c)
{
  for (int round = 0; round < RELAY_ROUNDS && !c->dead; round++)
    {
      bool moved = false;
      for (int d = 0; d < 2; d++)
        if (move (r, c, d, &moved) < 0)
          {
            end_conn (r, c, true);
            return;
          }
      if (c->shut[0] && c->shut[1])
        {
          end_conn (r, c, false);
          return;
        }
      if (!moved)
        break;
    }
  if (!c->dead && update (r, c) < 0)
    end_conn (r, c, true);
}

/* B's connect is over: 0 connected, -1 failed. */
static int
connected (struct csr_relay_conn *c)
{
  int e = 0;
  socklen_t len = sizeof e;
  if (getsockopt (c->fd[1], SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0)
    return -1;
  c->connecting = false;
  return 0;
}

struct csr_relay_conn *
csr_relay_add (struct csr_relay *r, int a, int b, bool connecting, void *tag)
{
  struct csr_relay_conn *c = NULL;
  int saved = EMFILE;
  if (r->n < r->max && (c = calloc (1, sizeof *c)) != NULL
      && (c->buf[0].d = malloc (2 * r->size)) != NULL)
    {
      c->buf[1].d = c->buf[0].d + r->size;
      c->fd[0] = a;
      c->fd[1] = b;
      c->connecting = b >= 0 && connecting;
      c->tag = tag;
      for (int i = 0; i < 2; i++)
        c->side[i] = (struct side){ c, i };
      /* Nothing moves before the caller has it: the set says when. */
      if (update (r, c) == 0)
        {
          c->next = r->live;
          if (r->live)
            r->live->prev = c;
          r->live = c;
          r->n++;
          return c;
        }
      saved = errno;
      for (int i = 0; i < 2; i++)
        if (c->ev[i])
          epoll_ctl (r->epfd, EPOLL_CTL_DEL, c->fd[i], NULL);
      free (c->buf[0].d);
    }
  else if (c)
    saved = ENOMEM;
  free (c);
  close (a);
  if (b >= 0)
    close (b);
  errno = saved;
  return NULL;
}

void
csr_relay_attach (struct csr_relay *r, struct csr_relay_conn *c, int b, bool connecting)
{
  if (c->dead || c->fd[1] >= 0)
    {
      close (b);
      return;
    }
  c->fd[1] = b;
  c->connecting = connecting;
  pump (r, c);
}

void
csr_relay_run (struct csr_relay *r)
{
  struct epoll_event evs[RELAY_EVENTS];
  int n = epoll_wait (r->epfd, evs, RELAY_EVENTS, 0);
  r->running = true;
  for (int i = 0; i < n; i++)
    {
      struct side *s = evs[i].data.ptr;
      struct csr_relay_conn *c = s->c;
      if (c->dead)
        continue;
      if (s->i == 1 && c->connecting)
        {
          if (connected (c) < 0)
            {
              end_conn (r, c, true);
              continue;
            }
        }
      else if (evs[i].events & EPOLLERR)
        {
          int e = 0;
          socklen_t len = sizeof e;
          if (getsockopt (c->fd[s->i], SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0)
            {
              end_conn (r, c, true);
              continue;
            }
        }
      pump (r, c);
    }
  r->running = false;
  free_dead (r);
}
