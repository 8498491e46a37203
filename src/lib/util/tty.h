/* csrun — pseudo-terminals: opening one, and relaying between the caller's
 * own terminal (or stdio) and a pty master while a process uses its slave
 * (runc's and crun's foreground terminal; csrun's OCI face without
 * --console-socket and `csrun sandbox exec -t`). */
#ifndef CSRUN_UTIL_TTY_H
#define CSRUN_UTIL_TTY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* A new pty from /dev/ptmx (of the current mount namespace): *MASTER and
 * *SLAVE (both close-on-exec, neither our controlling terminal), the
 * slave's path in NAME (NAMESZ bytes). */
int csr_pty_open (int *master, int *slave, char *name, size_t namesz, csr_error **err);

/* Copy the window size of FROM (a terminal) to TO; nothing when FROM has
 * none. */
void csr_tty_copy_size (int from, int to);

struct csr_tty_relay
{
  int master;  /* the pty's master */
  int in, out; /* IN -> MASTER (IN may be -1), MASTER -> OUT */
  /* When the relay ends (one of the two):
   * PID > 0: our child has exited (waitid WNOWAIT: not reaped) and the
   *   terminal is drained, or every slave is closed; meanwhile SIGINT,
   *   SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 go to PID;
   * END_FD >= 0: END_FD is readable (or hung up) and the terminal is
   *   drained, or every slave is closed; SIGINT, SIGTERM, SIGHUP and SIGQUIT
   *   end the relay at once (STOPPED_BY says which). */
  pid_t pid;
  int end_fd;
  /* At the end of IN (not a terminal: a pipe, a file), type the
   * terminal's end-of-file character (VEOF) so the process reads its end
   * too; else the terminal stays open (runc's behaviour). */
  bool eof_to_master;
  int stopped_by; /* set: 0, or the signal that ended it (END_FD) */
};

/* Relay R.  SIGWINCH copies IN's (else OUT's) window size to MASTER.  IN
 * is raw while it is a terminal, restored before returning on every path. */
int csr_tty_relay (struct csr_tty_relay *r, csr_error **err);

#endif
