/* csrun — relaying bytes between pairs of TCP sockets, for the keeper's
 * port forwards (keeper-ports.c).
 *
 * One epoll set holds every socket of every pair; its descriptor goes in
 * the keeper's poll loop, which calls csr_relay_run when it is readable.
 * The I/O is non-blocking, each direction has a bounded buffer (a reader
 * waits while its buffer is full), a socket is in the set only while
 * something is wanted from it (so no wake-up repeats for nothing), and an
 * end of stream on one side becomes a shutdown of writing on the other
 * once the buffer is written: half-closed connections work.  A pair ends
 * when both directions have ended, or at the first error (both sockets are
 * then shut down and reset). */
#ifndef CSRUN_SANDBOX_RELAY_H
#define CSRUN_SANDBOX_RELAY_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

struct csr_relay;
struct csr_relay_conn;

/* Called when the pair C has ended (its sockets are closed; C is freed
 * later), with its TAG. */
typedef void (*csr_relay_closed_fn) (struct csr_relay_conn *c, void *tag, void *arg);

/* A relay of at most MAX_CONNS pairs with BUF_SIZE bytes per direction. */
struct csr_relay *csr_relay_new (size_t max_conns, size_t buf_size, csr_relay_closed_fn closed,
                                 void *arg, csr_error **err);
/* Every pair is aborted (CLOSED called for each), then the relay freed. */
void csr_relay_free (struct csr_relay *r);

/* The descriptor to poll for POLLIN. */
int csr_relay_fd (const struct csr_relay *r);
/* Pairs open. */
size_t csr_relay_count (const struct csr_relay *r);

/* A new pair: A a connected socket, B the other side (-1: not there yet,
 * csr_relay_attach gives it), CONNECTING whether B's non-blocking connect
 * is in progress.  The relay owns A and B from here, also on failure:
 * NULL with errno (EMFILE at MAX_CONNS). */
struct csr_relay_conn *csr_relay_add (struct csr_relay *r, int a, int b, bool connecting,
                                      void *tag);
/* Give C its B (owned by the relay from here; on a failure C is aborted). */
void csr_relay_attach (struct csr_relay *r, struct csr_relay_conn *c, int b, bool connecting);
/* End C at once (both sockets shut down and reset). */
void csr_relay_abort (struct csr_relay *r, struct csr_relay_conn *c);
/* End every pair. */
void csr_relay_abort_all (struct csr_relay *r);

/* Move what can be moved now (never waits). */
void csr_relay_run (struct csr_relay *r);

#endif
