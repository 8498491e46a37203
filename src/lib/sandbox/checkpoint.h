/* csrun — sandbox checkpoints (csrun-sandbox(1) CHECKPOINTS): a sandbox's
 * writable layer and spec, kept after the sandbox is gone, from which a new
 * sandbox is restored.  Not process memory.
 *
 * The store (checkpoint.c): one directory of this user (csr_ckpt_root),
 * 0700 and trust-checked, with one directory per checkpoint:
 *   ID/layer.tar.zst   the archive (below)
 *   ID/checkpoint.json what ls shows and restore checks first: the archive's
 *                      size and sha256, expiry, the sandbox it came from,
 *                      its rootfs, counts, what was not saved
 *   ID/lock            flock: shared while a restore reads, exclusive to
 *                      remove (rm, expiry), held by the writer of .tmp-ID/
 * A checkpoint is written into .tmp-ID/ and renamed to ID/ once complete and
 * synced; a .tmp-ID/ whose lock is free is debris, collected.
 *
 * The archive (ckpt-pack.c, ckpt-unpack.c): a zstd-compressed pax tar whose
 * members are, in this order,
 *   spec.json          the sandbox's spec (csr_ckpt_spec)
 *   upper/...          the layer as overlayfs keeps it: whiteouts (0/0
 *                      character devices), opaque directories and other
 *                      user.* extended attributes, modes, owners and mtimes
 *                      as the sandbox sees them (read and written inside a
 *                      user namespace with the sandbox's id maps), symlinks,
 *                      hard links, FIFOs
 *   sessions/NAME      the picklable globals of the sandbox's session NAME
 *                      (a regular file: what the session's save wrote, a
 *                      pickle, session.h), one per session saved
 * Restoring treats the archive as hostile: its digest first, then every
 * entry's name, type, size and link target.  A session's pickle is only
 * ever read by a session's interpreter inside the restored sandbox, never
 * by csrun. */
#ifndef CSRUN_SANDBOX_CHECKPOINT_H
#define CSRUN_SANDBOX_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "../util/digest.h"
#include "../util/error.h"
#include "../util/json-gen.h"
#include "sandbox.h"

#define CSR_CKPT_ID_LEN 32
#define CSR_CKPT_ARCHIVE "layer.tar.zst"
#define CSR_CKPT_META "checkpoint.json"
#define CSR_CKPT_MAX_NOTES 32                        /* "not saved" notes kept (the rest counted) */
#define CSR_CKPT_MAX_SESSIONS 32                     /* sessions/ members (a keeper's sessions) */
#define CSR_CKPT_SESSION_MAX (1024ULL * 1024 * 1024) /* bytes of one session's save */

/* Errors with a meaning of their own (err->status), for exit codes. */
#define CSR_CKPT_E_DAMAGED EBADMSG /* digest mismatch, truncated, not a tar, unsafe entry */
#define CSR_CKPT_E_EXPIRED ETIME   /* past its --ttl */
#define CSR_CKPT_E_ROOTFS EXDEV    /* made on another rootfs */

/* What a checkpoint of a layer saved (counts) and did not (notes). */
struct csr_ckpt_stats
{
  uint64_t files, dirs, symlinks, hardlinks, whiteouts, opaque, fifos, sparse;
  uint64_t bytes;         /* regular files' contents */
  uint64_t archive_bytes; /* the compressed archive */
  char sha256[CSR_SHA256_HEX_LEN + 1];
  char *notes[CSR_CKPT_MAX_NOTES]; /* "PATH: reason" */
  size_t n_notes, n_notes_total;
};
void csr_ckpt_stats_release (struct csr_ckpt_stats *s);
/* Add a note (printf-style); counted past CSR_CKPT_MAX_NOTES. */
void csr_ckpt_stats_note (struct csr_ckpt_stats *s, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

/* The sandbox's spec as saved in the archive: what create was given (the
 * limits, env, workdir, timers, network, idle action, name), plus the
 * rootfs it ran on (SOURCE the tarball or directory, SHA256 the tarball's
 * digest or NULL for a directory). */
struct csr_ckpt_spec
{
  struct csr_sandbox_spec s;
  char *rootfs_sha256;
};
void csr_ckpt_spec_release (struct csr_ckpt_spec *c);
char *csr_ckpt_spec_json (const struct csr_ckpt_spec *c, csr_error **err);
int csr_ckpt_spec_parse (const char *text, size_t len, struct csr_ckpt_spec *c, csr_error **err);

/* checkpoint.json */
struct csr_ckpt_info
{
  char id[CSR_CKPT_ID_LEN + 1];
  char sandbox_id[CSR_SANDBOX_ID_LEN + 1];
  char *sandbox_name;  /* NULL: none */
  int64_t created;     /* unix seconds */
  int64_t expires;     /* unix seconds; 0: never */
  char trigger[16];    /* "command" or "idle" */
  char *rootfs_source; /* the rootfs (tarball or directory) */
  char *rootfs_sha256; /* NULL: a directory */
  struct csr_ckpt_stats stats;
  /* What each session saved and did not: a JSON array of
   * {"name", "bytes", "saved", "modules", "skipped": [{"name", "why"}]}
   * or {"name", "error"}; NULL: none. */
  char *sessions;
};
void csr_ckpt_info_release (struct csr_ckpt_info *i);
char *csr_ckpt_info_json (const struct csr_ckpt_info *i, bool pretty, csr_error **err);
/* The members of checkpoint.json as members of the object being written. */
void csr_ckpt_info_gen (struct csr_jgen *w, const struct csr_ckpt_info *i);
/* The stats (counts, archive, notes) as members of the object being written. */
void csr_ckpt_stats_gen (struct csr_jgen *w, const struct csr_ckpt_stats *s);
/* Read the stats from the object O (what csr_ckpt_stats_gen wrote). */
void csr_ckpt_stats_read (yajl_val o, struct csr_ckpt_stats *s);

/* ------------------------------------------------------------ the store (checkpoint.c) */

/* The checkpoint directory of this user: $CSRUN_CHECKPOINT_DIR, else
 * $XDG_DATA_HOME/csrun/checkpoints, else /var/lib/csrun/checkpoints for
 * root, else $HOME/.local/share/csrun/checkpoints; trust-checked
 * (CSR_TRUST_REFUSED on a mismatch), created 0700 when CREATE, else a
 * missing one is -1 with ENOENT.  Returns a directory fd (*PATH its path). */
int csr_ckpt_root (bool create, char **path, csr_error **err);

int csr_ckpt_new_id (char id[CSR_CKPT_ID_LEN + 1], csr_error **err);
/* Every checkpoint's id (sorted), malloc'ed. */
int csr_ckpt_list (int ckfd, char ***ids, size_t *n, csr_error **err);
/* ID_OR_PREFIX (an id, or a unique prefix of at least 4 digits): 0 with ID
 * set, or ENOENT "no such checkpoint". */
int csr_ckpt_find (int ckfd, const char *id_or_prefix, char id[CSR_CKPT_ID_LEN + 1],
                   csr_error **err);
int csr_ckpt_info_read (int ckfd, const char *id, struct csr_ckpt_info *i, csr_error **err);
/* Remove the checkpoint ID (its lock taken exclusively, not waiting: EBUSY
 * while a restore reads it). */
int csr_ckpt_remove (int ckfd, const char *id, csr_error **err);
/* Remove the checkpoints expired at NOW and the debris of writers that are
 * gone; their ids in *REMOVED (may be NULL). */
int csr_ckpt_collect (int ckfd, int64_t now, char ***removed, size_t *n_removed, csr_error **err);

/* A checkpoint being written: .tmp-ID/ with its lock held, and the archive
 * open for writing. */
struct csr_ckpt_writer
{
  int ckfd;   /* the checkpoint directory (not owned) */
  int tmpfd;  /* .tmp-ID/ */
  int lockfd; /* its lock, held */
  int archive_fd;
  char id[CSR_CKPT_ID_LEN + 1];
};
int csr_ckpt_writer_open (int ckfd, struct csr_ckpt_writer *w, csr_error **err);
/* Write checkpoint.json (INFO->id is W's), sync, rename .tmp-ID to ID. */
int csr_ckpt_writer_commit (struct csr_ckpt_writer *w, const struct csr_ckpt_info *info,
                            csr_error **err);
/* Remove what is left of an uncommitted checkpoint; close everything. */
void csr_ckpt_writer_abort (struct csr_ckpt_writer *w);

/* For a restore: the checkpoint ID's info (*I), its lock held shared
 * (*LOCKFD), its archive open (returned) and checked against the size and
 * digest of checkpoint.json (CSR_CKPT_E_DAMAGED); an expired checkpoint is
 * CSR_CKPT_E_EXPIRED (and left for the collector). */
int csr_ckpt_open_for_restore (int ckfd, const char *id, int64_t now, struct csr_ckpt_info *i,
                               int *lockfd, csr_error **err);

/* ------------------------------------------------------------ the archive */

/* A session's save, for the archive: NAME (a valid session name) and FD,
 * a regular file read from its start. */
struct csr_ckpt_session_file
{
  const char *name;
  int fd;
};

/* ckpt-pack.c: write the archive of the layer UPPERFD (a directory) to
 * OUT_FD: SPEC_JSON as spec.json, then upper/, then the N_SESSIONS
 * SESSIONS as sessions/NAME.  Counts, digest and size in *ST; OUT_FD is
 * fsync'ed.  Runs inside the sandbox's user namespace. */
int csr_ckpt_pack (int upperfd, int out_fd, const char *spec_json,
                   const struct csr_ckpt_session_file *sessions, size_t n_sessions,
                   struct csr_ckpt_stats *st, csr_error **err);

/* ckpt-unpack.c: the spec.json of the archive ARCHIVE_FD (read from its
 * start; CSR_CKPT_E_DAMAGED when it is not the first member or invalid). */
int csr_ckpt_read_spec (int archive_fd, struct csr_ckpt_spec *c, csr_error **err);
/* Empty the layer UPPERFD, then fill it from upper/ of the archive
 * ARCHIVE_FD (from its start), checking every entry (CSR_CKPT_E_DAMAGED:
 * a name that is absolute or has "..", a hard link out of the layer, a
 * device other than a whiteout, a truncated or invalid archive); each
 * sessions/NAME is written to the file NAME of the directory SESSFD
 * (CSR_CKPT_E_DAMAGED: not a regular file, not a session name, a duplicate,
 * more than CSR_CKPT_MAX_SESSIONS, larger than CSR_CKPT_SESSION_MAX).
 * Counts in *ST.  Runs inside the new sandbox's user namespace. */
int csr_ckpt_unpack (int archive_fd, int upperfd, int sessfd, struct csr_ckpt_stats *st,
                     csr_error **err);

#endif
