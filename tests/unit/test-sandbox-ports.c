/* Unit tests: a sandbox's ports as spec entries (sandbox/ports.h) and the
 * relay of the keeper's forwards (sandbox/relay.h). */
#include "config.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox/ports.h"
#include "sandbox/relay.h"
#include "util/json-gen.h"

/* ------------------------------------------------------------------ parsing */

static struct csr_sandbox_port
publish_ok (const char *arg)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  cr_assert_eq (csr_sandbox_port_parse_publish (arg, &p, &e), 0, "'%s': %s", arg, e ? e->msg : "");
  return p;
}

static void
publish_bad (const char *arg, const char *want)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  cr_assert_lt (csr_sandbox_port_parse_publish (arg, &p, &e), 0, "'%s' should be refused", arg);
  cr_assert (strstr (e->msg, want) && strstr (e->msg, arg), "'%s': '%s' lacks '%s'", arg, e->msg,
             want);
  csr_error_free (e);
}

Test (ports, publish)
{
  struct csr_sandbox_port p = publish_ok ("8080:80");
  cr_assert_str_eq (p.host, "127.0.0.1");
  cr_assert (!p.upstream && p.host_port_asked == 8080 && p.port == 80 && p.host_port == 0);
  p = publish_ok ("0:65535");
  cr_assert (p.host_port_asked == 0 && p.port == 65535);
  p = publish_ok ("10.1.2.3:1:2");
  cr_assert_str_eq (p.host, "10.1.2.3");
  p = publish_ok ("[::1]:0:9000");
  cr_assert_str_eq (p.host, "::1");
  p = publish_ok ("[0:0::0]:5:6");
  cr_assert_str_eq (p.host, "::");
  cr_assert (csr_sandbox_port_wildcard (&p));
  p = publish_ok ("0.0.0.0:5:6");
  cr_assert (csr_sandbox_port_wildcard (&p));
  p = publish_ok ("127.0.0.1:5:6");
  cr_assert (!csr_sandbox_port_wildcard (&p));
  publish_bad ("", "expected");
  publish_bad ("80", "expected");
  publish_bad ("8080:0", "PORT 1 to 65535");
  publish_bad ("8080:65536", "PORT 1 to 65535");
  publish_bad ("65536:80", "HOSTPORT 0 to 65535");
  publish_bad ("-1:80", "HOSTPORT");
  publish_bad ("1.2.3:80:80", "not a numeric IP address");
  publish_bad ("localhost:80:80", "not a numeric IP address");
  publish_bad ("::1:80:80", "in brackets");
  publish_bad ("[::1]80:80", "not a numeric IP address");
  publish_bad ("[::1:80:80", "not a numeric IP address");
  publish_bad ("[1.2.3.4]:80:80", "not a numeric IP address");
  publish_bad ("8080:80 ", "expected");
}

static void
upstream_bad (const char *arg)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  cr_assert_lt (csr_sandbox_port_parse_upstream (arg, &p, &e), 0, "'%s' should be refused", arg);
  cr_assert (strstr (e->msg, "--upstream") && strstr (e->msg, arg), "'%s': %s", arg, e->msg);
  csr_error_free (e);
}

Test (ports, upstream)
{
  struct csr_sandbox_port p;
  csr_error *e = NULL;
  cr_assert_eq (csr_sandbox_port_parse_upstream ("5432:db.example.com:6543", &p, &e), 0);
  cr_assert (p.upstream && p.port == 5432 && p.host_port == 6543);
  cr_assert_str_eq (p.host, "db.example.com");
  cr_assert_eq (csr_sandbox_port_parse_upstream ("80:[::1]:8080", &p, &e), 0);
  cr_assert_str_eq (p.host, "::1");
  cr_assert_eq (csr_sandbox_port_parse_upstream ("80:127.0.0.1:8080", &p, &e), 0);
  cr_assert_str_eq (p.host, "127.0.0.1");
  cr_assert (!csr_sandbox_port_wildcard (&p));
  upstream_bad ("80:host");
  upstream_bad ("0:host:80");
  upstream_bad ("80:host:0");
  upstream_bad ("80::80");
  upstream_bad ("80:a b:80");
  upstream_bad ("80:-x:80");
  upstream_bad ("80::1:80");
  upstream_bad ("x:host:80");
}

Test (ports, add_and_duplicates)
{
  struct csr_sandbox_spec s;
  memset (&s, 0, sizeof s);
  csr_error *e = NULL;
  struct csr_sandbox_port p;
  cr_assert_eq (csr_sandbox_port_parse_upstream ("5000:h:1", &p, &e), 0);
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert_lt (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert (strstr (e->msg, "used twice"), "%s", e->msg);
  csr_error_freep (&e);
  p = publish_ok ("0:5000");
  cr_assert_lt (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert (strstr (e->msg, "both published"), "%s", e->msg);
  csr_error_freep (&e);
  p = publish_ok ("8080:80");
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  p = publish_ok ("8081:80"); /* the same sandbox port twice: fine */
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  p = publish_ok ("8080:81");
  cr_assert_lt (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert (strstr (e->msg, "published twice"), "%s", e->msg);
  csr_error_freep (&e);
  p = publish_ok ("0:81"); /* two free ports: fine */
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  while (s.n_ports < CSR_SANDBOX_MAX_PORTS)
    cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert_lt (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert (strstr (e->msg, "at most"), "%s", e->msg);
  csr_error_free (e);
}

Test (ports, urls_and_json)
{
  struct csr_sandbox_spec s, back;
  memset (&s, 0, sizeof s);
  csr_error *e = NULL;
  struct csr_sandbox_port p = publish_ok ("[::1]:0:9000");
  p.host_port = 41000;
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  cr_assert_eq (csr_sandbox_port_parse_upstream ("7000:db:5432", &p, &e), 0);
  cr_assert_eq (csr_sandbox_port_add (&s, &p, &e), 0);
  char h[300], sb[64];
  csr_sandbox_port_urls (&s.ports[0], h, sizeof h, sb, sizeof sb);
  cr_assert_str_eq (h, "tcp://[::1]:41000");
  cr_assert_str_eq (sb, "tcp://127.0.0.1:9000");
  csr_sandbox_port_urls (&s.ports[1], h, sizeof h, sb, sizeof sb);
  cr_assert_str_eq (h, "tcp://db:5432");
  cr_assert_str_eq (sb, "tcp://127.0.0.1:7000");

  struct csr_jgen w;
  cr_assert_eq (csr_jgen_init (&w, false, NULL), 0);
  csr_jgen_map_open (&w);
  csr_sandbox_ports_gen (&w, &s, false);
  csr_jgen_map_close (&w);
  char *doc = csr_jgen_finish (&w, "test", NULL, NULL);
  cr_assert_str_eq (doc,
                    "{\"ports\":[{\"type\":\"publish\",\"host_ip\":\"::1\",\"host_port\":41000,"
                    "\"host_port_asked\":0,\"port\":9000},{\"type\":\"upstream\",\"host\":"
                    "\"db\",\"host_port\":5432,\"port\":7000}]}");
  char ebuf[64];
  yajl_val t = yajl_tree_parse (doc, ebuf, sizeof ebuf);
  memset (&back, 0, sizeof back);
  cr_assert_eq (csr_sandbox_ports_read (t, &back, &e), 0);
  cr_assert_eq (back.n_ports, 2);
  cr_assert_eq (memcmp (&back.ports[0], &s.ports[0], sizeof s.ports[0]), 0);
  cr_assert_eq (memcmp (&back.ports[1], &s.ports[1], sizeof s.ports[1]), 0);
  yajl_tree_free (t);
  free (doc);

  /* Damaged entries are refused, no "ports" is none. */
  const char *bad[] = {
    "{\"ports\":{}}",
    "{\"ports\":[{\"type\":\"publish\",\"host_ip\":\"::1\",\"host_port\":1,\"port\":0,"
    "\"host_port_asked\":0}]}",
    "{\"ports\":[{\"type\":\"upstream\",\"host_port\":1,\"port\":2}]}",
    "{\"ports\":[{\"type\":\"other\",\"host\":\"h\",\"host_port\":1,\"port\":2}]}",
    "{\"ports\":[{\"type\":\"upstream\",\"host\":\"h\",\"host_port\":70000,\"port\":2}]}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      t = yajl_tree_parse (bad[i], ebuf, sizeof ebuf);
      cr_assert_lt (csr_sandbox_ports_read (t, &back, &e), 0, "%s", bad[i]);
      csr_error_freep (&e);
      yajl_tree_free (t);
    }
  t = yajl_tree_parse ("{}", ebuf, sizeof ebuf);
  cr_assert_eq (csr_sandbox_ports_read (t, &back, &e), 0);
  cr_assert_eq (back.n_ports, 0);
  yajl_tree_free (t);
}

/* ------------------------------------------------------------------ the relay */

static int n_closed;
static void
closed (struct csr_relay_conn *c, void *tag, void *arg)
{
  (void)c, (void)arg;
  cr_assert_eq ((long)tag, 7);
  n_closed++;
}

/* Run R while its descriptor is ready, waiting at most MS for the first. */
static void
spin (struct csr_relay *r, int ms)
{
  struct pollfd p = { csr_relay_fd (r), POLLIN, 0 };
  for (int i = 0; i < 1000 && poll (&p, 1, i ? 20 : ms) > 0; i++)
    csr_relay_run (r);
}

static void
pair (int sv[2])
{
  cr_assert_eq (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  fcntl (sv[1], F_SETFL, O_NONBLOCK);
  fcntl (sv[0], F_SETFL, O_NONBLOCK);
}

static ssize_t
read_some (int fd, char *buf, size_t n, struct csr_relay *r)
{
  for (int i = 0; i < 200; i++)
    {
      ssize_t got = recv (fd, buf, n, MSG_DONTWAIT);
      if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        return got;
      spin (r, 10);
    }
  return -1;
}

Test (relay, both_ways_and_half_close)
{
  int x[2], y[2];
  pair (x);
  pair (y);
  n_closed = 0;
  struct csr_relay *r = csr_relay_new (4, 4096, closed, NULL, NULL);
  cr_assert_not_null (r);
  /* Client x[0] -> relay (x[1] | y[0]) -> server y[1]. */
  cr_assert_not_null (csr_relay_add (r, x[1], y[0], false, (void *)7L));
  cr_assert_eq (csr_relay_count (r), 1);
  char buf[64];
  cr_assert_eq (send (x[0], "hello", 5, 0), 5);
  cr_assert_eq (read_some (y[1], buf, sizeof buf, r), 5);
  cr_assert_eq (memcmp (buf, "hello", 5), 0);
  cr_assert_eq (send (y[1], "back", 4, 0), 4);
  cr_assert_eq (read_some (x[0], buf, sizeof buf, r), 4);
  /* The client is done writing: the server reads the end, and can still answer. */
  shutdown (x[0], SHUT_WR);
  cr_assert_eq (read_some (y[1], buf, sizeof buf, r), 0);
  cr_assert_eq (send (y[1], "late answer", 11, 0), 11);
  cr_assert_eq (read_some (x[0], buf, sizeof buf, r), 11);
  cr_assert_eq (n_closed, 0);
  shutdown (y[1], SHUT_WR);
  cr_assert_eq (read_some (x[0], buf, sizeof buf, r), 0);
  spin (r, 100);
  cr_assert_eq (n_closed, 1);
  cr_assert_eq (csr_relay_count (r), 0);
  csr_relay_free (r);
  close (x[0]);
  close (y[1]);
}

Test (relay, bounded_and_quiet_when_stalled)
{
  int x[2], y[2];
  pair (x);
  pair (y);
  n_closed = 0;
  struct csr_relay *r = csr_relay_new (4, 4096, closed, NULL, NULL);
  cr_assert_not_null (csr_relay_add (r, x[1], y[0], false, (void *)7L));
  /* The server does not read: the client can write only until every buffer
   * on the way is full (the relay holds at most its 4096 bytes). */
  static char chunk[8192];
  memset (chunk, 'z', sizeof chunk);
  size_t sent = 0;
  for (int i = 0; i < 100000; i++)
    {
      ssize_t w = send (x[0], chunk, sizeof chunk, MSG_DONTWAIT);
      if (w <= 0)
        {
          spin (r, 0); /* the relay moves what it can */
          w = send (x[0], chunk, sizeof chunk, MSG_DONTWAIT);
        }
      if (w <= 0)
        break;
      sent += (size_t)w;
    }
  cr_assert_lt (sent, 64u << 20, "the relay kept reading (%zu bytes)", sent);
  /* Stalled: nothing to do, so the relay's descriptor is not ready (no
   * wake-up again and again). */
  struct pollfd p = { csr_relay_fd (r), POLLIN, 0 };
  cr_assert_eq (poll (&p, 1, 50), 0, "the relay wakes up while stalled");
  /* Everything arrives once the server reads. */
  shutdown (x[0], SHUT_WR);
  size_t got = 0;
  char buf[65536];
  for (;;)
    {
      ssize_t n = read_some (y[1], buf, sizeof buf, r);
      cr_assert_geq (n, 0);
      if (n == 0)
        break;
      for (ssize_t i = 0; i < n; i++)
        cr_assert_eq (buf[i], 'z');
      got += (size_t)n;
    }
  cr_assert_eq (got, sent);
  csr_relay_free (r);
  cr_assert_eq (n_closed, 1);
  close (x[0]);
  close (y[1]);
}

Test (relay, peer_gone_aborts)
{
  int x[2], y[2];
  pair (x);
  pair (y);
  n_closed = 0;
  struct csr_relay *r = csr_relay_new (4, 4096, closed, NULL, NULL);
  cr_assert_not_null (csr_relay_add (r, x[1], y[0], false, (void *)7L));
  close (y[1]); /* the server is gone */
  cr_assert_eq (send (x[0], "data", 4, 0), 4);
  char buf[16];
  ssize_t n = read_some (x[0], buf, sizeof buf, r);
  cr_assert (n == 0 || (n < 0 && errno == ECONNRESET), "n %zd", n);
  cr_assert_eq (n_closed, 1);
  cr_assert_eq (csr_relay_count (r), 0);
  csr_relay_free (r);
  close (x[0]);
}

Test (relay, connect_refused_and_limit)
{
  /* A TCP port nobody listens on (bound, not listening). */
  int hold = socket (AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = { .sin_family = AF_INET };
  sa.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  socklen_t len = sizeof sa;
  cr_assert_eq (bind (hold, (struct sockaddr *)&sa, sizeof sa), 0);
  cr_assert_eq (getsockname (hold, (struct sockaddr *)&sa, &len), 0);
  int b = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int rc = connect (b, (struct sockaddr *)&sa, sizeof sa);
  cr_assert (rc < 0);
  int x[2];
  pair (x);
  n_closed = 0;
  struct csr_relay *r = csr_relay_new (1, 4096, closed, NULL, NULL);
  if (errno == EINPROGRESS)
    {
      cr_assert_not_null (csr_relay_add (r, x[1], b, true, (void *)7L));
      char buf[4];
      ssize_t n = read_some (x[0], buf, sizeof buf, r);
      cr_assert (n == 0 || (n < 0 && errno == ECONNRESET), "n %zd", n);
      cr_assert_eq (n_closed, 1);
    }
  else
    close (b), close (x[1]);
  close (x[0]);
  /* At the limit: refused with EMFILE, the descriptors closed. */
  int y[2], z[2];
  pair (y);
  pair (z);
  cr_assert_not_null (csr_relay_add (r, y[1], -1, false, (void *)7L));
  errno = 0;
  cr_assert_null (csr_relay_add (r, z[1], -1, false, (void *)7L));
  cr_assert_eq (errno, EMFILE);
  cr_assert_eq (fcntl (z[1], F_GETFD), -1, "not closed");
  csr_relay_free (r);
  close (y[0]);
  close (z[0]);
  close (hold);
}

Test (relay, b_attached_later)
{
  int x[2], y[2];
  pair (x);
  pair (y);
  n_closed = 0;
  struct csr_relay *r = csr_relay_new (4, 4096, closed, NULL, NULL);
  struct csr_relay_conn *c = csr_relay_add (r, x[1], -1, false, (void *)7L);
  cr_assert_not_null (c);
  /* What the client sends (and its end) waits for B. */
  cr_assert_eq (send (x[0], "early", 5, 0), 5);
  shutdown (x[0], SHUT_WR);
  spin (r, 50);
  cr_assert_eq (n_closed, 0);
  csr_relay_attach (r, c, y[0], false);
  char buf[16];
  cr_assert_eq (read_some (y[1], buf, sizeof buf, r), 5);
  cr_assert_eq (memcmp (buf, "early", 5), 0);
  cr_assert_eq (read_some (y[1], buf, sizeof buf, r), 0);
  close (y[1]);
  spin (r, 50);
  cr_assert_eq (n_closed, 1);
  csr_relay_free (r);
  close (x[0]);
}
