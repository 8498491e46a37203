/* csrun — a sandbox's ports as spec entries (see ports.h). */
#include "config.h"
#include "ports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/json.h"

#define PUBLISH_FORM "[HOSTIP:]HOSTPORT:PORT, e.g. 8080:8000 or 127.0.0.1:0:8000"
#define UPSTREAM_FORM "PORT:HOST:HOSTPORT, e.g. 5432:127.0.0.1:5432"

/* A port number of LEN digits at S, at least MIN. */
static bool
parse_num (const char *s, size_t len, unsigned min, uint16_t *out)
{
  if (len == 0 || len > 5)
    return false;
  unsigned v = 0;
  for (size_t i = 0; i < len; i++)
    {
      if (s[i] < '0' || s[i] > '9')
        return false;
      v = v * 10 + (unsigned)(s[i] - '0');
    }
  if (v < min || v > 65535)
    return false;
  *out = (uint16_t)v;
  return true;
}

/* The numeric address S (LEN bytes) of FAMILY, written back in its usual
 * form to OUT. */
static bool
parse_addr (int family, const char *s, size_t len, char out[256])
{
  char tmp[64];
  unsigned char bin[16];
  if (len == 0 || len >= sizeof tmp)
    return false;
  memcpy (tmp, s, len);
  tmp[len] = '\0';
  return inet_pton (family, tmp, bin) == 1 && inet_ntop (family, bin, out, 256) != NULL;
}

static bool
host_name_ok (const char *s, size_t len)
{
  if (len == 0 || len > 253 || s[0] == '-' || s[0] == '.')
    return false;
  for (size_t i = 0; i < len; i++)
    if (!strchr ("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.", s[i]))
      return false;
  return true;
}

int
csr_sandbox_port_parse_publish (const char *arg, struct csr_sandbox_port *p, csr_error **err)
{
  memset (p, 0, sizeof *p);
  const char *last = strrchr (arg, ':');
  if (last == NULL || !parse_num (last + 1, strlen (last + 1), 1, &p->port))
    return csr_error_set (err, EINVAL, "--publish '%s': expected %s (PORT 1 to 65535)", arg,
                          PUBLISH_FORM);
  const char *hp = arg; /* HOSTPORT, up to LAST */
  bool ok = true;
  if (arg[0] == '[')
    {
      const char *close = strchr (arg, ']');
      ok = close && close < last && close[1] == ':'
           && parse_addr (AF_INET6, arg + 1, (size_t)(close - arg - 1), p->host);
      hp = close ? close + 2 : last;
    }
  else
    {
      const char *c = memrchr (arg, ':', (size_t)(last - arg));
      if (c)
        {
          ok = parse_addr (AF_INET, arg, (size_t)(c - arg), p->host);
          if (!ok && memchr (arg, ':', (size_t)(c - arg)))
            return csr_error_set (err, EINVAL,
                                  "--publish '%s': an IPv6 host address goes in brackets "
                                  "([::1]:8080:8000)",
                                  arg);
          hp = c + 1;
        }
      else
        snprintf (p->host, sizeof p->host, "127.0.0.1");
    }
  if (!ok)
    return csr_error_set (err, EINVAL,
                          "--publish '%s': the host address is not a numeric IP address", arg);
  if (hp > last || !parse_num (hp, (size_t)(last - hp), 0, &p->host_port_asked))
    return csr_error_set (err, EINVAL,
                          "--publish '%s': expected %s (HOSTPORT 0 to 65535, 0: a free port)", arg,
                          PUBLISH_FORM);
  p->host_port = 0;
  return 0;
}

int
csr_sandbox_port_parse_upstream (const char *arg, struct csr_sandbox_port *p, csr_error **err)
{
  memset (p, 0, sizeof *p);
  p->upstream = true;
  const char *first = strchr (arg, ':'), *last = strrchr (arg, ':');
  if (first == NULL || first == last || !parse_num (arg, (size_t)(first - arg), 1, &p->port)
      || !parse_num (last + 1, strlen (last + 1), 1, &p->host_port))
    return csr_error_set (err, EINVAL,
                          "--upstream '%s': expected %s (ports 1 to 65535; an IPv6 HOST in "
                          "brackets)",
                          arg, UPSTREAM_FORM);
  const char *h = first + 1;
  size_t len = (size_t)(last - h);
  bool ok;
  if (len >= 2 && h[0] == '[' && h[len - 1] == ']')
    ok = parse_addr (AF_INET6, h + 1, len - 2, p->host);
  else if (memchr (h, ':', len))
    ok = false;
  else if (!(ok = parse_addr (AF_INET, h, len, p->host)))
    {
      ok = host_name_ok (h, len);
      if (ok)
        snprintf (p->host, sizeof p->host, "%.*s", (int)len, h);
    }
  if (!ok)
    return csr_error_set (err, EINVAL,
                          "--upstream '%s': HOST is not an IP address or a host name (%s)", arg,
                          UPSTREAM_FORM);
  return 0;
}

bool
csr_sandbox_port_wildcard (const struct csr_sandbox_port *p)
{
  return !p->upstream && (strcmp (p->host, "0.0.0.0") == 0 || strcmp (p->host, "::") == 0);
}

int
csr_sandbox_port_add (struct csr_sandbox_spec *s, const struct csr_sandbox_port *p, csr_error **err)
{
  if (s->n_ports == CSR_SANDBOX_MAX_PORTS)
    return csr_error_set (err, EINVAL, "at most %d --publish and --upstream",
                          CSR_SANDBOX_MAX_PORTS);
  for (size_t i = 0; i < s->n_ports; i++)
    {
      const struct csr_sandbox_port *q = &s->ports[i];
      if (p->upstream && q->upstream && p->port == q->port)
        return csr_error_set (err, EINVAL, "--upstream: the sandbox's port %u is used twice",
                              p->port);
      if (p->upstream != q->upstream && p->port == q->port)
        return csr_error_set (
            err, EINVAL, "port %u in the sandbox is both published and an --upstream", p->port);
      if (!p->upstream && !q->upstream && p->host_port_asked
          && p->host_port_asked == q->host_port_asked && strcmp (p->host, q->host) == 0)
        return csr_error_set (err, EINVAL, "--publish: host port %s:%u is published twice", p->host,
                              p->host_port_asked);
    }
  s->ports[s->n_ports++] = *p;
  return 0;
}

static void
url (char *buf, size_t n, const char *host, unsigned port)
{
  bool v6 = strchr (host, ':') != NULL;
  snprintf (buf, n, "tcp://%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "", port);
}

void
csr_sandbox_port_urls (const struct csr_sandbox_port *p, char *host_url, size_t host_len,
                       char *sandbox_url, size_t sandbox_len)
{
  url (host_url, host_len, p->host, p->host_port);
  url (sandbox_url, sandbox_len, "127.0.0.1", p->port);
}

void
csr_sandbox_port_gen (struct csr_jgen *w, const struct csr_sandbox_port *p, bool urls)
{
  csr_jgen_kv_str (w, "type", p->upstream ? "upstream" : "publish");
  csr_jgen_kv_str (w, p->upstream ? "host" : "host_ip", p->host);
  csr_jgen_kv_int (w, "host_port", p->host_port);
  if (!p->upstream)
    csr_jgen_kv_int (w, "host_port_asked", p->host_port_asked);
  csr_jgen_kv_int (w, "port", p->port);
  if (urls)
    {
      char h[300], s[64];
      csr_sandbox_port_urls (p, h, sizeof h, s, sizeof s);
      csr_jgen_kv_str (w, "host_url", h);
      csr_jgen_kv_str (w, "sandbox_url", s);
    }
}

void
csr_sandbox_ports_gen (struct csr_jgen *w, const struct csr_sandbox_spec *s, bool urls)
{
  csr_jgen_str (w, "ports");
  csr_jgen_array_open (w);
  for (size_t i = 0; i < s->n_ports; i++)
    {
      csr_jgen_map_open (w);
      csr_sandbox_port_gen (w, &s->ports[i], urls);
      csr_jgen_map_close (w);
    }
  csr_jgen_array_close (w);
}

/* The port member KEY of O (MIN to 65535). */
static bool
get_port (yajl_val o, const char *key, unsigned min, uint16_t *out)
{
  yajl_val v = csr_json_get (o, key);
  if (v == NULL || !YAJL_IS_INTEGER (v) || YAJL_GET_INTEGER (v) < (long long)min
      || YAJL_GET_INTEGER (v) > 65535)
    return false;
  *out = (uint16_t)YAJL_GET_INTEGER (v);
  return true;
}

int
csr_sandbox_ports_read (yajl_val t, struct csr_sandbox_spec *s, csr_error **err)
{
  s->n_ports = 0;
  yajl_val a = csr_json_get (t, "ports");
  if (a == NULL)
    return 0;
  if (!YAJL_IS_ARRAY (a) || a->u.array.len > CSR_SANDBOX_MAX_PORTS)
    return csr_error_set (err, EINVAL, "spec.json: invalid \"ports\"");
  for (size_t i = 0; i < a->u.array.len; i++)
    {
      yajl_val o = a->u.array.values[i];
      struct csr_sandbox_port *p = &s->ports[i];
      memset (p, 0, sizeof *p);
      const char *type = csr_json_str (csr_json_get (o, "type"));
      p->upstream = type && strcmp (type, "upstream") == 0;
      const char *host = csr_json_str (csr_json_get (o, p->upstream ? "host" : "host_ip"));
      bool ok = type && (p->upstream || strcmp (type, "publish") == 0) && host && *host
                && strlen (host) < sizeof p->host && get_port (o, "port", 1, &p->port)
                && get_port (o, "host_port", 0, &p->host_port)
                && (p->upstream || get_port (o, "host_port_asked", 0, &p->host_port_asked));
      if (!ok)
        return csr_error_set (err, EINVAL, "spec.json: invalid \"ports\" entry %zu", i);
      snprintf (p->host, sizeof p->host, "%s", host);
      s->n_ports = i + 1;
    }
  return 0;
}
