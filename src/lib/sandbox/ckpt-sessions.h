/* csrun — the sessions of a checkpoint, the keeper's side
 * (keeper-ckpt-sessions.c, for keeper-checkpoint.c).
 *
 * Checkpoint: every session of the sandbox saves its picklable globals
 * (keeper_session_save, session.h) into a pipe that the keeper drains into
 * an unnamed file of the checkpoint's temporary directory, at most
 * CSR_CKPT_SESSION_MAX bytes; the pack worker then archives each file as
 * sessions/NAME.  A session that is busy with a cell, dies, answers with an
 * error, writes too much or takes longer than its timeout is listed with
 * the reason, and the checkpoint goes on without it.
 *
 * Restore: the unpack worker has written each sessions/NAME of the archive
 * into a directory of the sandbox's state directory (ckpt_sessions_dir);
 * each file is fed through a pipe into a new session of that name
 * (keeper_session_load) and removed.  The pickles are only ever read by a
 * session's interpreter, inside the sandbox.
 *
 * Nothing here waits: the keeper serves its other clients meanwhile.  DONE
 * is called from the keeper's poll loop once every session is done (never
 * from inside the call that starts them, nor from a stopping hook).  One
 * checkpoint or restore at a time. */
#ifndef CSRUN_SANDBOX_CKPT_SESSIONS_H
#define CSRUN_SANDBOX_CKPT_SESSIONS_H

#include <stddef.h>

#include "../util/error.h"
#include "checkpoint.h"
#include "keeper.h"

typedef void (*ckpt_sessions_done_fn) (struct keeper *k);

/* Start saving every session of K (when it runs) into unnamed files of the
 * directory DIRFD, each within TIMEOUT_MS: the number under way (DONE
 * follows), 0 when none is (DONE is not called; a busy session is already
 * listed), -1 with *ERR. */
int ckpt_sessions_save (struct keeper *k, int dirfd, int timeout_ms, ckpt_sessions_done_fn done,
                        csr_error **err);
/* After DONE: the saves to archive, at most MAX (their names and
 * descriptors stay valid until ckpt_sessions_release). */
size_t ckpt_sessions_files (struct csr_ckpt_session_file *files, size_t max);

/* The directory of a restore's sessions/ members in K's state directory:
 * made empty (CREATE; writable by the sandbox's root, as the layer is) or
 * opened; its descriptor, or -1 with *ERR. */
int ckpt_sessions_dir (struct keeper *k, bool create, csr_error **err);
/* Remove it (and anything left in it). */
void ckpt_sessions_dir_remove (struct keeper *k);
/* Start loading every save of the directory DIRFD into a new session of
 * its name (K running), each within TIMEOUT_MS: as ckpt_sessions_save. */
int ckpt_sessions_load (struct keeper *k, int dirfd, int timeout_ms, ckpt_sessions_done_fn done,
                        csr_error **err);

/* What was saved (or loaded) and what was not, per session, as a JSON
 * array (malloc'ed; NULL on ENOMEM): for a checkpoint
 * {"name", "bytes", "saved", "modules", "skipped": [{"name", "why"}]}, for
 * a restore {"name", "loaded", "skipped"}, or {"name", "error"}.  The
 * names and reasons come from the sessions: checked, cut to a few hundred
 * bytes each. */
char *ckpt_sessions_json (void);

/* Forget everything: calls under way go on, unheard; pipes and files are
 * closed. */
void ckpt_sessions_release (struct keeper *k);

#endif
