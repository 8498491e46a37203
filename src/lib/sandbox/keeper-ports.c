/* csrun — the keeper's part for a sandbox's ports (ports.h).
 *
 * When the keeper sets up (INIT): the host's listeners of --publish are
 * bound (a port in use fails the create, and the port chosen for HOSTPORT 0
 * goes into spec.json), the hosts of --upstream are resolved.  At each start
 * of the jail (and at INIT): a socket maker joins the sandbox's network
 * namespace (netns-socket.h) and the listeners of --upstream are made
 * there.  At each stop: every forwarded connection ends, the sandbox's
 * listeners and the socket maker go; the host's listeners stay (a
 * connection while the sandbox is stopped is closed at once).
 *
 * A connection to a --publish listener gets a socket from the maker, which
 * the keeper connects to the sandbox's 127.0.0.1:PORT; a connection to an
 * --upstream listener gets a socket of the keeper's, connected to
 * HOST:HOSTPORT.  The relay (relay.h) moves the bytes.  An open connection
 * keeps the sandbox busy (not idle). */
#include "config.h"
#include "ports.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "../util/clock.h"
#include "../util/json-gen.h"
#include "../util/log.h"
#include "keeper.h"
#include "netns-socket.h"
#include "relay.h"

#define PORTS_MAX_CONNS 256  /* forwarded connections at once; more wait in the backlog */
#define PORTS_BUF_SIZE 65536 /* per direction of a connection */
#define PORTS_QUEUE 1024     /* sockets asked of the maker and not answered yet */
#define PORTS_BACKLOG 128    /* of the host's listeners */
#define ACCEPTS_PER_WAKE 16  /* then the other descriptors get their turn */
#define MAKER_TIMEOUT_MS 10000

/* One --publish or --upstream. */
struct fwd
{
  struct csr_sandbox_port *p; /* in the keeper's spec */
  int host_fd;                /* publish: listening on the host */
  int inner_fd;               /* upstream: listening in the sandbox */
  struct sockaddr_storage to; /* upstream: HOST:HOSTPORT */
  socklen_t to_len;
  size_t active;
  uint64_t total;
};

struct waiting
{
  struct csr_relay_conn *c; /* NULL: it ended while waiting */
  struct fwd *f;
};

static struct
{
  struct fwd fwd[CSR_SANDBOX_MAX_PORTS];
  size_t n;
  struct csr_relay *relay;
  struct csr_nsock ns;
  bool live;   /* the sandbox's side is there for the running jail */
  bool paused; /* the listeners are out of the poll loop (PORTS_MAX_CONNS) */
  int reserve; /* given up to turn a connection away when out of descriptors */
  struct waiting queue[PORTS_QUEUE]; /* publish connections awaiting their socket */
  size_t q_head, q_n;
  char fault[512]; /* the last failure of the sandbox's side */
} P = { .ns = { 0, -1 }, .reserve = -1 };

/* ------------------------------------------------------------ helpers */

static void
note_fault (struct keeper *k, csr_error *e)
{
  snprintf (P.fault, sizeof P.fault, "%s", csr_error_text (e));
  csr_warn ("csrun sandbox %s: ports: %s", k->spec->id, P.fault);
  csr_error_free (e);
}

/* "127.0.0.1:8080:8000" as it was asked. */
static void
publish_text (const struct csr_sandbox_port *p, char *buf, size_t n)
{
  bool v6 = strchr (p->host, ':') != NULL;
  snprintf (buf, n, "%s%s%s:%u:%u", v6 ? "[" : "", p->host, v6 ? "]" : "", p->host_port_asked,
            p->port);
}

/* Out of the poll loop, closed, -1. */
static void
unwatch_close (struct keeper *k, int *fd)
{
  if (*fd < 0)
    return;
  keeper_unwatch (k, *fd);
  close (*fd);
  *fd = -1;
}

static void
reset_close (int fd)
{
  struct linger l = { 1, 0 };
  setsockopt (fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
  close (fd);
}

static void on_listener (struct keeper *k, int fd, short revents, void *arg);

/* The listeners in the poll loop (ON), or out of it. */
static void
set_listening (struct keeper *k, bool on)
{
  for (size_t i = 0; i < P.n; i++)
    {
      struct fwd *f = &P.fwd[i];
      int fd = f->p->upstream ? f->inner_fd : f->host_fd;
      if (fd < 0)
        continue;
      keeper_unwatch (k, fd);
      if (on && keeper_watch (k, fd, POLLIN, on_listener, f) < 0)
        csr_warn ("csrun sandbox %s: ports: the keeper's poll table is full", k->spec->id);
    }
  P.paused = !on;
}

/* A pair of the relay ended. */
static void
on_closed (struct csr_relay_conn *c, void *tag, void *arg)
{
  struct keeper *k = arg;
  struct fwd *f = tag;
  f->active--;
  k->n_busy--;
  k->last_activity_ms = (uint64_t)csr_mono_ms ();
  for (size_t i = 0; i < P.q_n; i++)
    if (P.queue[(P.q_head + i) % PORTS_QUEUE].c == c)
      P.queue[(P.q_head + i) % PORTS_QUEUE].c = NULL;
  if (P.paused && csr_relay_count (P.relay) < PORTS_MAX_CONNS)
    set_listening (k, true);
}

/* A pair the relay took: counted until on_closed. */
static void
counted (struct keeper *k, struct fwd *f)
{
  f->active++;
  f->total++;
  k->n_busy++;
  k->last_activity_ms = (uint64_t)csr_mono_ms ();
}

/* ------------------------------------------------------------ the socket maker */

static void on_answer (struct keeper *k, int fd, short revents, void *arg);

static int
maker_start (struct keeper *k, csr_error **err)
{
  if (P.ns.fd >= 0)
    return 0;
  struct csr_sbx_target t;
  keeper_target (k, &t);
  if (csr_nsock_start (&t, &P.ns, err) < 0)
    return -1;
  if (keeper_watch (k, P.ns.fd, POLLIN, on_answer, NULL) < 0)
    {
      csr_nsock_stop (&P.ns);
      return csr_error_set (err, EMFILE, "the keeper's poll table is full");
    }
  return 0;
}

/* The maker is gone (or must go): the connections waiting for it end. */
static void
maker_stop (struct keeper *k)
{
  if (P.ns.fd >= 0)
    keeper_unwatch (k, P.ns.fd);
  csr_nsock_stop (&P.ns);
  while (P.q_n)
    {
      struct waiting w = P.queue[P.q_head];
      P.q_head = (P.q_head + 1) % PORTS_QUEUE;
      P.q_n--;
      if (w.c)
        csr_relay_abort (P.relay, w.c);
    }
  P.q_head = 0;
}

/* Connect the sandbox's socket S for the waiting connection W. */
static void
connect_inner (struct waiting w, int s)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (w.f->p->port) };
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (connect (s, (struct sockaddr *)&sa, sizeof sa) == 0)
    csr_relay_attach (P.relay, w.c, s, false);
  else if (errno == EINPROGRESS)
    csr_relay_attach (P.relay, w.c, s, true);
  else
    {
      close (s);
      csr_relay_abort (P.relay, w.c);
    }
}

static void
on_answer (struct keeper *k, int fd, short revents, void *arg)
{
  (void)fd, (void)revents, (void)arg;
  for (;;)
    {
      int s = -1, error = 0;
      int r = csr_nsock_answer (&P.ns, &s, &error);
      if (r == 0)
        return;
      if (r < 0 || P.q_n == 0)
        {
          if (s >= 0)
            close (s);
          csr_warn ("csrun sandbox %s: ports: the socket maker ended; a new one comes with the "
                    "next connection",
                    k->spec->id);
          maker_stop (k);
          return;
        }
      struct waiting w = P.queue[P.q_head];
      P.q_head = (P.q_head + 1) % PORTS_QUEUE;
      P.q_n--;
      if (w.c == NULL)
        {
          if (s >= 0)
            close (s);
        }
      else if (s < 0)
        {
          csr_warn ("csrun sandbox %s: ports: a socket in the sandbox: %s", k->spec->id,
                    strerror (error));
          csr_relay_abort (P.relay, w.c);
        }
      else
        connect_inner (w, s);
    }
}

/* ------------------------------------------------------------ connections */

static void
start_publish (struct keeper *k, struct fwd *f, int a)
{
  csr_error *e = NULL;
  if (P.q_n == PORTS_QUEUE)
    {
      reset_close (a);
      return;
    }
  struct csr_relay_conn *c = csr_relay_add (P.relay, a, -1, false, f);
  if (c == NULL)
    return;
  counted (k, f);
  if (maker_start (k, &e) < 0 || csr_nsock_ask (&P.ns, false, 0, &e) < 0)
    {
      note_fault (k, e);
      csr_relay_abort (P.relay, c);
      return;
    }
  P.queue[(P.q_head + P.q_n++) % PORTS_QUEUE] = (struct waiting){ c, f };
}

static void
start_upstream (struct keeper *k, struct fwd *f, int a)
{
  int b = socket (f->to.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (b < 0)
    {
      reset_close (a);
      return;
    }
  int rc = connect (b, (struct sockaddr *)&f->to, f->to_len);
  bool connecting = rc < 0 && errno == EINPROGRESS;
  if (rc < 0 && !connecting)
    {
      reset_close (a);
      close (b);
      return;
    }
  if (csr_relay_add (P.relay, a, b, connecting, f))
    counted (k, f);
}

static int
accept_one (int fd)
{
  int a = accept4 (fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (a < 0 && (errno == EMFILE || errno == ENFILE) && P.reserve >= 0)
    {
      /* Out of descriptors: this one is turned away rather than left to
       * wake the loop again and again. */
      close (P.reserve);
      int x = accept4 (fd, NULL, NULL, SOCK_CLOEXEC);
      if (x >= 0)
        reset_close (x);
      P.reserve = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      errno = EMFILE;
    }
  return a;
}

static void
on_listener (struct keeper *k, int fd, short revents, void *arg)
{
  struct fwd *f = arg;
  (void)revents;
  for (int i = 0; i < ACCEPTS_PER_WAKE; i++)
    {
      if (csr_relay_count (P.relay) >= PORTS_MAX_CONNS)
        {
          set_listening (k, false);
          return;
        }
      int a = accept_one (fd);
      if (a < 0)
        {
          if (errno == ECONNABORTED || errno == EINTR)
            continue;
          return;
        }
      if (!k->running || !P.live)
        {
          /* Stopped: nothing to forward to. */
          close (a);
          continue;
        }
      if (f->p->upstream)
        start_upstream (k, f, a);
      else
        start_publish (k, f, a);
    }
}

static void
on_relay (struct keeper *k, int fd, short revents, void *arg)
{
  (void)k, (void)fd, (void)revents, (void)arg;
  csr_relay_run (P.relay);
}

/* ------------------------------------------------------------ set-up */

static int
bind_host (struct fwd *f, csr_error **err)
{
  struct csr_sandbox_port *p = f->p;
  char what[300];
  publish_text (p, what, sizeof what);
  struct sockaddr_storage ss;
  memset (&ss, 0, sizeof ss);
  socklen_t len;
  bool v6 = strchr (p->host, ':') != NULL;
  if (v6)
    {
      struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
      a->sin6_family = AF_INET6;
      a->sin6_port = htons (p->host_port_asked);
      len = sizeof *a;
      if (inet_pton (AF_INET6, p->host, &a->sin6_addr) != 1)
        return csr_error_set (err, EINVAL, "--publish %s: bad host address", what);
    }
  else
    {
      struct sockaddr_in *a = (struct sockaddr_in *)&ss;
      a->sin_family = AF_INET;
      a->sin_port = htons (p->host_port_asked);
      len = sizeof *a;
      if (inet_pton (AF_INET, p->host, &a->sin_addr) != 1)
        return csr_error_set (err, EINVAL, "--publish %s: bad host address", what);
    }
  int s = socket (ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0)
    return csr_error_errno (err, "--publish %s: socket", what);
  f->host_fd = s;
  int on = 1;
  /* SO_REUSEADDR: a port left in TIME_WAIT can be bound again (a port
   * someone listens on still can't). */
  if (setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) < 0
      || (v6 && setsockopt (s, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) < 0))
    return csr_error_errno (err, "--publish %s: setsockopt", what);
  if (bind (s, (struct sockaddr *)&ss, len) < 0)
    {
      if (errno == EADDRINUSE)
        return csr_error_set (err, 0, "--publish %s: host port %u is in use (on %s)", what,
                              p->host_port_asked, p->host);
      if (errno == EACCES)
        return csr_error_set (err, 0,
                              "--publish %s: host port %u needs privileges (a port below "
                              "net.ipv4.ip_unprivileged_port_start)",
                              what, p->host_port_asked);
      if (errno == EADDRNOTAVAIL)
        return csr_error_set (err, 0, "--publish %s: %s is not an address of this host", what,
                              p->host);
      return csr_error_errno (err, "--publish %s: bind", what);
    }
  if (listen (s, PORTS_BACKLOG) < 0)
    return csr_error_errno (err, "--publish %s: listen", what);
  memset (&ss, 0, sizeof ss);
  len = sizeof ss;
  if (getsockname (s, (struct sockaddr *)&ss, &len) < 0)
    return csr_error_errno (err, "--publish %s: getsockname", what);
  p->host_port = ntohs (v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                           : ((struct sockaddr_in *)&ss)->sin_port);
  return 0;
}

static int
resolve (struct fwd *f, csr_error **err)
{
  const struct csr_sandbox_port *p = f->p;
  char port[8];
  snprintf (port, sizeof port, "%u", p->host_port);
  struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
  struct addrinfo *res = NULL;
  int rc = getaddrinfo (p->host, port, &hints, &res);
  if (rc != 0 || res == NULL || res->ai_addrlen > sizeof f->to)
    {
      if (res)
        freeaddrinfo (res);
      return csr_error_set (err, 0, "--upstream %u:%s:%u: %s", p->port, p->host, p->host_port,
                            rc ? gai_strerror (rc) : "no address");
    }
  memcpy (&f->to, res->ai_addr, res->ai_addrlen);
  f->to_len = res->ai_addrlen;
  freeaddrinfo (res);
  return 0;
}

/* The sandbox's side, for the jail that runs now. */
static int
side_up (struct keeper *k, csr_error **err)
{
  if (maker_start (k, err) < 0)
    return -1;
  for (size_t i = 0; i < P.n; i++)
    {
      struct fwd *f = &P.fwd[i];
      if (!f->p->upstream)
        continue;
      int fd = csr_nsock_get (&P.ns, true, f->p->port, MAKER_TIMEOUT_MS, err);
      if (fd < 0)
        return csr_error_wrap (err, "--upstream %u:%s:%u: listen on the sandbox's 127.0.0.1:%u",
                               f->p->port, f->p->host, f->p->host_port, f->p->port);
      f->inner_fd = fd;
      if (!P.paused && keeper_watch (k, fd, POLLIN, on_listener, f) < 0)
        return csr_error_set (err, EMFILE, "the keeper's poll table is full");
    }
  P.live = true;
  P.fault[0] = '\0';
  return 0;
}

/* The sandbox's side goes: its connections, listeners and socket maker. */
static void
side_down (struct keeper *k)
{
  P.live = false;
  if (P.relay)
    csr_relay_abort_all (P.relay);
  maker_stop (k);
  for (size_t i = 0; i < P.n; i++)
    unwatch_close (k, &P.fwd[i].inner_fd);
}

/* ------------------------------------------------------------ the part */

static int
ports_init (struct keeper *k, csr_error **err)
{
  struct csr_sandbox_spec *s = k->spec;
  if (s->n_ports == 0)
    return 0;
  if (s->host_net)
    return csr_error_set (err, EINVAL,
                          "--publish and --upstream need --net none (with --net host the "
                          "sandbox uses the host's network itself)");
  P.reserve = open ("/dev/null", O_RDONLY | O_CLOEXEC);
  P.relay = csr_relay_new (PORTS_MAX_CONNS, PORTS_BUF_SIZE, on_closed, k, err);
  if (P.relay == NULL)
    return -1;
  if (keeper_watch (k, csr_relay_fd (P.relay), POLLIN, on_relay, NULL) < 0)
    return csr_error_set (err, EMFILE, "the keeper's poll table is full");
  for (size_t i = 0; i < s->n_ports; i++)
    {
      struct fwd *f = &P.fwd[i];
      f->p = &s->ports[i];
      f->host_fd = f->inner_fd = -1;
      P.n = i + 1;
      if (f->p->upstream ? resolve (f, err) < 0 : bind_host (f, err) < 0)
        return -1;
      if (!f->p->upstream && keeper_watch (k, f->host_fd, POLLIN, on_listener, f) < 0)
        return csr_error_set (err, EMFILE, "the keeper's poll table is full");
    }
  /* The ports chosen for HOSTPORT 0. */
  if (csr_sandbox_spec_write (k->b->dirfd, s, err) < 0)
    return -1;
  return side_up (k, err);
}

static void
ports_started (struct keeper *k)
{
  if (P.n == 0 || P.live)
    return;
  csr_error *e = NULL;
  if (side_up (k, &e) < 0)
    {
      note_fault (k, e);
      side_down (k);
    }
}

static void
ports_stopping (struct keeper *k)
{
  if (P.n)
    side_down (k);
}

static void
ports_finish (struct keeper *k)
{
  side_down (k);
  for (size_t i = 0; i < P.n; i++)
    unwatch_close (k, &P.fwd[i].host_fd);
  if (P.relay)
    {
      keeper_unwatch (k, csr_relay_fd (P.relay));
      csr_relay_free (P.relay);
      P.relay = NULL;
    }
  if (P.reserve >= 0)
    close (P.reserve);
  P.reserve = -1;
  P.n = 0;
}

/* {"live":..., "connections": N, "ports":[{"connections":..., "accepted":...}], "fault":...}:
 * the forwards as the keeper sees them, in the spec's order. */
static void
op_ports (struct keeper *k, int fd, yajl_val req, int *fds, size_t n_fds, bool *keep)
{
  (void)req, (void)fds, (void)n_fds, (void)keep;
  struct csr_jgen w;
  if (csr_jgen_init (&w, false, NULL) < 0)
    return keeper_reply_error (fd, "out of memory");
  csr_jgen_map_open (&w);
  csr_jgen_str (&w, "live");
  csr_jgen_bool (&w, k->running && P.live);
  csr_jgen_kv_int (&w, "connections", P.relay ? (long long)csr_relay_count (P.relay) : 0);
  if (P.fault[0])
    csr_jgen_kv_str (&w, "fault", P.fault);
  csr_jgen_str (&w, "ports");
  csr_jgen_array_open (&w);
  for (size_t i = 0; i < P.n; i++)
    {
      csr_jgen_map_open (&w);
      csr_jgen_kv_int (&w, "connections", (long long)P.fwd[i].active);
      csr_jgen_kv_int (&w, "accepted", (long long)P.fwd[i].total);
      csr_jgen_map_close (&w);
    }
  csr_jgen_array_close (&w);
  csr_jgen_map_close (&w);
  char *s = csr_jgen_finish (&w, "reply", NULL, NULL);
  if (s)
    keeper_reply (fd, s);
  else
    keeper_reply_error (fd, "out of memory");
  free (s);
}

static const struct keeper_op ports_ops[] = {
  { "ports", op_ports, false },
  { NULL, NULL, false },
};

const struct keeper_part keeper_part_ports = {
  "ports", ports_ops, ports_init, ports_started, ports_stopping, ports_finish,
};
