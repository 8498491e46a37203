/* csrun — a sandbox's sessions, the keeper's side (keeper-session.c):
 * persistent interpreters (policies/session.py, embedded at build time)
 * started through the sandbox's exec machinery, each with a control channel
 * only the keeper holds (a socketpair).  A cell's streams, verdict pipe and
 * code go from the caller to the interpreter as descriptors (SCM_RIGHTS):
 * the keeper forwards no byte of output.  See csrun-sandbox(1), SESSIONS.
 *
 * For checkpoints: a session's picklable globals are saved to, and loaded
 * from, a descriptor with the two functions below (the CLI's `session save`
 * and `session load` call them too). */
#ifndef CSRUN_SANDBOX_SESSION_H
#define CSRUN_SANDBOX_SESSION_H

#include <stddef.h>

#include "../util/error.h"
#include "keeper.h"

/* The session server's source (policies/session.py). */
extern const char csr_session_py[];
extern const size_t csr_session_py_len;

/* The keeper's parts for runs (keeper-run.c) and sessions (keeper-session.c). */
extern const struct keeper_part keeper_part_run;
extern const struct keeper_part keeper_part_session;

#define KEEPER_MAX_SESSIONS 32

/* The names of K's sessions (at most MAX of them, borrowed: valid until
 * the next request), e.g. to save each for a checkpoint. */
size_t keeper_session_names (struct keeper *k, const char **names, size_t max);

/* Save the globals of K's session NAME to FD: one pickle (protocol 4) of
 *   {"csrun-session": 1, "globals": {NAME: pickle of the value},
 *    "modules": {NAME: module name}}
 * holding every global that pickles (not the dunders; a module is saved as
 * its name and imported again on load; a function, class or instance of a
 * class defined in a cell is skipped: it pickles only as a reference to
 * __main__).  *REPORT (malloc'ed) is the session's JSON report
 * {"saved": [names], "modules": [names], "skipped": [{"name", "why"}]}.
 * This waits (the keeper does nothing else meanwhile) at most TIMEOUT_MS for
 * the session; FD is written by the sandbox's interpreter, so it must be a
 * pipe (read by someone else meanwhile) or a memfd, never a host file or a
 * directory.  -1 and *ERR: ENOENT no such session, EBUSY a cell runs,
 * ETIMEDOUT (the session is then killed: its state is not known), EPIPE
 * the session died. */
int keeper_session_save (struct keeper *k, const char *name, int fd, int timeout_ms, char **report,
                         csr_error **err);
/* Load such a save from FD into K's session NAME, started first when it
 * does not run (so a save goes into a new session).  Unpickling runs the
 * save's code in the session: load only saves of this user's sessions.
 * *REPORT: {"loaded": [names], "skipped": [{"name", "why"}]}.  Errors as
 * keeper_session_save's. */
int keeper_session_load (struct keeper *k, const char *name, int fd, int timeout_ms, char **report,
                         csr_error **err);

#endif
