/* csrun — a sandbox's ports (csrun-sandbox(1) PORTS).
 *
 * --publish [HOSTIP:]HOSTPORT:PORT: the keeper listens on the host's
 * HOSTIP:HOSTPORT and forwards each connection to the sandbox's
 * 127.0.0.1:PORT.  --upstream PORT:HOST:HOSTPORT: the keeper listens on the
 * sandbox's 127.0.0.1:PORT and forwards each connection to HOST:HOSTPORT.
 * The sandbox's side is reached with sockets made inside its network
 * namespace (netns-socket.h), so it works with --net none.
 *
 * This file: the ports as spec entries (parsed from the options, in
 * spec.json, as URLs).  The keeper's part that forwards them is
 * keeper-ports.c (bytes relayed by relay.h). */
#ifndef CSRUN_SANDBOX_PORTS_H
#define CSRUN_SANDBOX_PORTS_H

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "../util/error.h"
#include "../util/json-gen.h"
#include "sandbox.h"

/* "[HOSTIP:]HOSTPORT:PORT": HOSTIP a numeric address (an IPv6 one in
 * brackets; default 127.0.0.1), HOSTPORT 0 to 65535 (0: a free one), PORT 1
 * to 65535.  EINVAL with a message naming ARG. */
int csr_sandbox_port_parse_publish (const char *arg, struct csr_sandbox_port *p, csr_error **err);
/* "PORT:HOST:HOSTPORT": HOST an address (IPv6 in brackets) or a host name. */
int csr_sandbox_port_parse_upstream (const char *arg, struct csr_sandbox_port *p, csr_error **err);

/* A --publish on every interface of the host (0.0.0.0 or ::). */
bool csr_sandbox_port_wildcard (const struct csr_sandbox_port *p);

/* Append P to S's ports: at most CSR_SANDBOX_MAX_PORTS; an upstream's port
 * used twice, a port both published and an upstream, or the same host
 * address and port published twice are refused (EINVAL). */
int csr_sandbox_port_add (struct csr_sandbox_spec *s, const struct csr_sandbox_port *p,
                          csr_error **err);

/* "tcp://ADDRESS:PORT" of the host's side and of the sandbox's side. */
void csr_sandbox_port_urls (const struct csr_sandbox_port *p, char *host_url, size_t host_len,
                            char *sandbox_url, size_t sandbox_len);

/* P's members, in a map the caller opened: type, host_ip/host, host_port,
 * host_port_asked (publish), port, and with URLS host_url and sandbox_url. */
void csr_sandbox_port_gen (struct csr_jgen *w, const struct csr_sandbox_port *p, bool urls);
/* S's "ports" member (an array of maps), in a map the caller opened. */
void csr_sandbox_ports_gen (struct csr_jgen *w, const struct csr_sandbox_spec *s, bool urls);
/* S's ports from spec.json's tree T (its "ports" member; none: no ports). */
int csr_sandbox_ports_read (yajl_val t, struct csr_sandbox_spec *s, csr_error **err);

/* The keeper's part (keeper-ports.c; keeper.h). */
struct keeper_part;
extern const struct keeper_part keeper_part_ports;

#endif
