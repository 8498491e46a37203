/* csrun — a sandbox's sessions, the keeper's side (keeper-session.c):
 * persistent interpreters (policies/session.py, embedded at build time)
 * started through the sandbox's exec machinery, each with a control channel
 * only the keeper holds (a socketpair).  A cell's streams, verdict pipe and
 * code go from the caller to the interpreter as descriptors (SCM_RIGHTS):
 * the keeper forwards no byte of output.  See csrun-sandbox(1), SESSIONS.
 *
 * For checkpoints: a session's picklable globals are saved to, and loaded
 * from, a descriptor with the two functions below, which do not block the
 * keeper (the CLI's `session save` and `session load` call them too). */
#ifndef CSRUN_SANDBOX_SESSION_H
#define CSRUN_SANDBOX_SESSION_H

#include <stddef.h>

#include <yajl/yajl_tree.h>

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

/* A save or load (below) is over: REPORT the session's JSON report (an
 * object, not otherwise checked: it comes from the sandbox), or NULL and
 * ERR; both borrowed for the call.  ARG is the caller's. */
typedef void (*keeper_session_done_fn) (struct keeper *k, void *arg, yajl_val report,
                                        const csr_error *err);

/* Save the globals of K's session NAME to FD: one pickle (protocol 4) of
 *   {"csrun-session": 1, "globals": {NAME: pickle of the value},
 *    "modules": {NAME: module name}}
 * holding every global that pickles (not the dunders; a module is saved as
 * its name and imported again on load; a function, class or instance of a
 * class defined in a cell is skipped: it pickles only as a reference to
 * __main__).  The report is {"saved": [names], "modules": [names],
 * "skipped": [{"name", "why"}]}.  FD is sent to the session (the caller
 * closes its own copy) and written by the sandbox's interpreter, so it must
 * be a pipe (read by someone else meanwhile) or a memfd, never a host file
 * or a directory; the session closes it before it reports.
 *
 * Neither this nor the load waits: the keeper goes on serving its other
 * clients, and DONE(K, ARG, ...) is called later from its poll loop, once.
 * A session that takes longer than TIMEOUT_MS is interrupted
 * (KeyboardInterrupt: it goes on, the call fails with ETIMEDOUT), and killed
 * when it does not answer within 2 s of that (also ETIMEDOUT); EPIPE: the
 * session died.  Meanwhile the session is busy (a cell is refused) and the
 * sandbox is not idle.  -1 and *ERR when the call can't start (DONE is then
 * not called): ENOENT no such session, EBUSY a cell runs, ESRCH the sandbox
 * is stopped, EPIPE the session is gone. */
int keeper_session_save (struct keeper *k, const char *name, int fd, int timeout_ms,
                         keeper_session_done_fn done, void *arg, csr_error **err);
/* Load such a save from FD (a pipe or a memfd) into K's session NAME,
 * started first when it does not run (so a save goes into a new session):
 * report {"loaded": [names], "skipped": [{"name", "why"}]}.  Unpickling runs
 * the save's code in the session: load only saves of this user's sessions.
 * As keeper_session_save otherwise (EAGAIN: too many sessions). */
int keeper_session_load (struct keeper *k, const char *name, int fd, int timeout_ms,
                         keeper_session_done_fn done, void *arg, csr_error **err);
/* The calls under way with ARG go on, but their DONE is not called. */
void keeper_session_forget (struct keeper *k, void *arg);

#endif
