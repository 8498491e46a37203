/* Passing descriptors over a unix socket (SCM_RIGHTS). */
#ifndef CSR_UTIL_FDPASS_H
#define CSR_UTIL_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define CSR_FDPASS_MAX 8

/* Receive up to LEN bytes into DATA from SOCK with at most one descriptor
 * (close-on-exec): the byte count (0 at end of stream), *FD the descriptor
 * or -1 when none came; -1 with errno on failure (EINTR retried). */
ssize_t csr_recv_fd (int sock, void *data, size_t len, int *fd);
/* The same with up to MAX (at most CSR_FDPASS_MAX) descriptors: FDS[*N];
 * descriptors beyond MAX are closed. */
ssize_t csr_recv_fds (int sock, void *data, size_t len, int *fds, size_t max, size_t *n);
/* Send LEN bytes of DATA on SOCK with the descriptor FD (none when FD < 0),
 * one message (MSG_NOSIGNAL): the byte count, or -1 with errno (EINTR
 * retried). */
ssize_t csr_send_fd (int sock, const void *data, size_t len, int fd);

/* Send all LEN bytes of DATA on the stream socket SOCK, the N_FDS (at most
 * CSR_FDPASS_MAX) descriptors FDS with the first part (SCM_RIGHTS), without
 * SIGPIPE: 0, or -1 with errno (EINTR retried). */
int csr_send_fds (int sock, const void *data, size_t len, const int *fds, size_t n_fds);

#endif
