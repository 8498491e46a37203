/* csrun — the stop signals (SIGINT, SIGTERM, SIGHUP) as bytes on a pipe: a
 * handler writes the signal's number to the pipe and a poll loop watches
 * its read end (the self-pipe trick).  One pipe per process, as a handler
 * carries no data: the MCP server's, batch's and each batch worker's, and
 * csrun run's (whose read end the capture loop polls). */
#ifndef CSRUN_UTIL_STOPSIG_H
#define CSRUN_UTIL_STOPSIG_H

#include <signal.h>

#include "error.h"

/* Make the pipe (close-on-exec, non-blocking): its read end, or -1 with
 * *ERR (errno kept). */
int csr_stopsig_open (csr_error **err);
/* The read end (-1 when the pipe is not open). */
int csr_stopsig_fd (void);
/* Catch the stop signals with HANDLER (SA_RESTART, no mask); NULL is
 * csr_stopsig_note. */
void csr_stopsig_catch (void (*handler) (int));
/* In a handler: SIG as one byte on the pipe (when it is open; a full pipe
 * means a stop is pending already).  Keeps errno. */
void csr_stopsig_note (int sig);
/* A signal noted, read from the pipe; 0 when there is none. */
int csr_stopsig_take (void);
/* Close both ends (a forked child that must not hold them, or the end). */
void csr_stopsig_close (void);
/* *SET: the stop signals (to block them around a fork). */
void csr_stopsig_set (sigset_t *set);

#endif
