/* csrun — files in and out of a sandbox: csrun sandbox cp, read, write, ls,
 * find (csrun-sandbox(1), FILES).
 *
 * The client sends one "files" request to the sandbox's keeper with one
 * pipe end (SCM_RIGHTS) through which the data flows: a tar stream, a
 * file's bytes or listing records.  The keeper (files.c) forks a worker
 * (csr_sbx_fork_in) that joins the sandbox's cgroup and its user and mount
 * namespaces, becomes the sandbox's root, may no longer map code or exec
 * (a seccomp filter: nothing of the sandbox's tree can run in it), and does
 * the work; its result, one JSON object, comes back on a status pipe the
 * keeper watches and is the reply when the worker ends.  The keeper never
 * waits for it.
 *
 * Inside, every path is resolved with openat2 RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS against the sandbox's /; a tar is extracted below a
 * directory descriptor, one component at a time without following any
 * symlink (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), each file made under a
 * temporary name with O_EXCL | O_NOFOLLOW and renamed when complete.
 * Outside, the client writes on the host as the invoking user with the same
 * code (files-tar.c). */
#ifndef CSRUN_SANDBOX_FILES_H
#define CSRUN_SANDBOX_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

#define CSR_FILES_MAX_BYTES_DEFAULT (1ULL << 30)
#define CSR_FILES_MAX_ENTRIES_DEFAULT 100000
#define CSR_FILES_MAX_OPS 32    /* at once per sandbox */
#define CSR_FILES_MAX_NOTES 50  /* skipped/refused entries listed (more are counted) */
#define CSR_FILES_MAX_DEPTH 128 /* directories below the top */
#define CSR_FILES_PATH_MAX 4096

enum csr_files_action
{
  CSR_FILES_READ,  /* a file's bytes -> the pipe */
  CSR_FILES_WRITE, /* the pipe's bytes -> a file (parents made) */
  CSR_FILES_GET,   /* a tree -> a tar on the pipe */
  CSR_FILES_PUT,   /* a tar on the pipe -> a tree */
  CSR_FILES_LS,    /* listing records -> the pipe */
  CSR_FILES_FIND,
};

struct csr_files_req
{
  enum csr_files_action action;
  const char *path;    /* in the sandbox: absolute, or relative to its working directory */
  bool raw_tar;        /* PUT: any tar, extracted below PATH; else one tree csrun packed */
  bool recursive;      /* LS */
  const char *pattern; /* FIND */
  int mode;            /* WRITE: permission bits, or -1 (an existing file's, else 0644) */
  uint64_t max_bytes, max_entries;
};

struct csr_files_limits
{
  uint64_t max_bytes;   /* file data in one operation */
  uint64_t max_entries; /* entries in one operation */
};

/* Entries not copied (skipped: special files, other file systems,
 * unreadable) or refused (a tar's entries that would leave the tree,
 * devices, ...), with why; the first CSR_FILES_MAX_NOTES, MORE counts the
 * rest. */
struct csr_files_note
{
  char *path;
  char *reason;
};
struct csr_files_notes
{
  struct csr_files_note *v;
  size_t n, cap;
  uint64_t more;
};

struct csr_files_stats
{
  char *path;    /* the reply's: the request's path, clean and absolute (NULL: none) */
  char type[16]; /* the reply's: what PATH is ("file", "dir", ...; "" unknown) */
  uint64_t files, dirs, symlinks, hardlinks, bytes, entries;
  int error_errno; /* the reply's: the errno of the worker's error, 0: none */
  bool truncated;  /* LS, FIND: stopped at max_entries */
  struct csr_files_notes skipped, refused;
};

/* -1 when out of memory. */
int csr_files_note_add (struct csr_files_notes *n, const char *path, const char *reason);
void csr_files_stats_release (struct csr_files_stats *st);
/* KEY: [{"path", "reason"}...], then KEY_more: the count of the rest. */
struct csr_jgen;
void csr_files_gen_notes (struct csr_jgen *w, const char *key, const struct csr_files_notes *n);

/* ------------------------------------------------------------ pure helpers */

/* PATH (absolute, or relative to WORKDIR) as a clean absolute path: no
 * empty, "." or ".." component, no trailing '/' ("/" itself for the root);
 * *SLASH (may be NULL) tells whether PATH ended with '/' (or "/." ...).  A
 * path whose ".." would climb above / is an error (EINVAL) naming it. */
int csr_files_clean_path (const char *workdir, const char *path, char **out, bool *slash,
                          csr_error **err);

/* A tar entry's name as a clean relative path in OUT (SIZE bytes): "./a//b/"
 * is "a/b", "." or "./" is "" (the top itself).  Returns 0, or the reason it
 * is refused: */
enum
{
  CSR_FILES_NAME_ABSOLUTE = 1, /* starts with '/' */
  CSR_FILES_NAME_DOTDOT,       /* has a ".." component */
  CSR_FILES_NAME_LONG,         /* longer than SIZE - 1 or CSR_FILES_PATH_MAX - 1 */
  CSR_FILES_NAME_EMPTY,        /* NULL or "" */
};
int csr_files_entry_name (const char *name, char *out, size_t size);
const char *csr_files_name_reason (int why);

/* Where a tree named TOP goes for a destination DST (cp's rule): INTO
 * DST (a directory, made when missing: the tree keeps its name), or AS DST
 * (in DST's parent, the tree renamed to DST's last component).  DST_KIND:
 * CSR_FILES_MISSING, CSR_FILES_IS_DIR, CSR_FILES_IS_OTHER; SLASH: DST ended
 * with '/'; TOP NULL: a raw tar (always INTO), "." (the contents of a root:
 * INTO).  -1 with *ERR (ENOTDIR) when DST is not a directory and must be. */
enum
{
  CSR_FILES_MISSING,
  CSR_FILES_IS_DIR,
  CSR_FILES_IS_OTHER,
};
enum
{
  CSR_FILES_PLACE_INTO,
  CSR_FILES_PLACE_AS,
};
int csr_files_place (const char *dst, int dst_kind, bool slash, const char *top, csr_error **err);

/* Is ARG a sandbox path "ID:PATH" (ID non-empty without '/', PATH
 * non-empty)?  *ID and *PATH are malloc'ed copies. */
bool csr_files_split_arg (const char *arg, char **id, char **path);

/* ------------------------------------------------------------ listing records */

enum csr_files_type
{
  CSR_FT_OTHER = 0,
  CSR_FT_FILE,
  CSR_FT_DIR,
  CSR_FT_SYMLINK,
  CSR_FT_FIFO,
  CSR_FT_SOCKET,
  CSR_FT_CHAR,
  CSR_FT_BLOCK,
};
int csr_files_type_of (mode_t mode);
/* "file", "dir", "symlink", "fifo", "socket", "char", "block", "other". */
const char *csr_files_type_name (int type);

/* One entry of a listing (ls, find): PATH relative to the listed directory
 * (its own name for a single entry), TARGET a symlink's. */
struct csr_files_rec
{
  int type;
  uint32_t mode; /* permission bits (07777) */
  uint64_t size;
  int64_t mtime;
  uint32_t mtime_ns;
  char *path;
  char *target; /* NULL but for symlinks */
};

/* The record's bytes in BUF (CAP bytes): its length, or 0 when it does not
 * fit or is not valid (paths of at most CSR_FILES_PATH_MAX - 1 bytes). */
size_t csr_files_rec_encode (const struct csr_files_rec *r, char *buf, size_t cap);
/* The record at BUF[0..LEN): the bytes it takes, 0 when LEN does not hold
 * all of it yet, -1 when it is malformed.  R's strings point into BUF. */
ssize_t csr_files_rec_decode (const char *buf, size_t len, struct csr_files_rec *r);

/* ------------------------------------------------------------ the client (files-client.c) */

/* Send R to the keeper of the sandbox in DIRFD with DATA, a pipe end the
 * worker reads (WRITE, PUT) or writes (the others).  Returns the connected
 * socket for csr_files_finish. */
int csr_files_start (int dirfd, const struct csr_files_req *r, int data, csr_error **err);
/* Wait for the reply: 0 with ST filled, or -1 with *ERR and *REFUSED: true
 * when the sandbox refused (it is stopped; a path is missing, of the wrong
 * type or leaves /; a cap; no space), false when csrun failed. */
int csr_files_finish (int sock, struct csr_files_stats *st, bool *refused, csr_error **err);

/* Copy IN to OUT until IN ends (splice when it can).  With SOCK >= 0, stop
 * when it becomes readable (the keeper replied: the worker is done) or OUT
 * is closed by the other end (EPIPE): *STOPPED is set and that is no error.
 * *N counts the bytes.  Errors name IN_WHAT or OUT_WHAT. */
int csr_files_pump (int in, const char *in_what, int out, const char *out_what, int sock,
                    uint64_t *n, bool *stopped, csr_error **err);

/* WRITE's data is framed, so that a client that dies half-way can't make
 * the worker take what came so far for the whole file: frames of a 32-bit
 * length (native order, at most CSR_FILES_FRAME_MAX) and that many bytes,
 * ended by a frame of length 0.  Send IN so on OUT (what csr_files_pump
 * does otherwise; the same SOCK, *N, *STOPPED). */
#define CSR_FILES_FRAME_MAX (64 * 1024)
int csr_files_send_framed (int in, const char *in_what, int out, int sock, uint64_t *n,
                           bool *stopped, csr_error **err);

/* Read every listing record from FD until it ends (at most MAX). */
int csr_files_read_list (int fd, uint64_t max, struct csr_files_rec **v, size_t *n,
                         csr_error **err);
void csr_files_list_free (struct csr_files_rec *v, size_t n);

/* Write the host path SRC as a tar to FD: a file, a directory with all
 * below it (one file system), a symlink as a link (never followed); named
 * after SRC's last component ("." for / and for a path ending in "." or
 * ".."). */
int csr_files_host_pack (int fd, const char *src, const struct csr_files_limits *lim,
                         struct csr_files_stats *st, csr_error **err);
/* Extract the tar of one tree csrun packed (a sandbox's GET) from FD at
 * DST on the host, as csr_files_place says, as the invoking user (modes
 * under the umask, no set-id bit). */
int csr_files_host_unpack (int fd, const char *dst, const struct csr_files_limits *lim,
                           struct csr_files_stats *st, csr_error **err);

#endif
