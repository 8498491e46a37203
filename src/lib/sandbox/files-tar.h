/* csrun — sandbox files: trees to and from tar streams (libarchive, loaded
 * by the caller with csr_la_load), below directory descriptors.  Shared by
 * the worker inside a sandbox (files-worker.c) and the client on the host
 * (files-client.c).  Nothing here follows a symbolic link. */
#ifndef CSRUN_SANDBOX_FILES_TAR_H
#define CSRUN_SANDBOX_FILES_TAR_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../util/archive-lib.h"
#include "../util/fs.h"
#include "files.h"

/* The errno of A's last error when it is a system error, else 0. */
int csr_ftar_errno (struct archive *a);

/* Temporary files (util/fs.h's) that a SIGTERM can't leave behind: the
 * one being made is registered (SIGTERM blocked meanwhile), and
 * csr_ftar_tmp_remove, async-signal-safe, removes it. */
int csr_ftar_tmp_create (int dirfd, mode_t mode, char name[CSR_TMP_NAME_MAX], csr_error **err);
int csr_ftar_tmp_commit (int dirfd, const char *name, int fd, const char *leaf, csr_error **err);
void csr_ftar_tmp_abort (int dirfd, const char *name, int fd);
void csr_ftar_tmp_remove (void);

/* A reader of a tar (uncompressed, or gzip, bzip2, xz, zstd) on FD. */
struct archive *csr_ftar_reader (int fd, csr_error **err);
/* A writer of a pax tar on FD; csr_ftar_writer_close flushes and checks. */
struct archive *csr_ftar_writer (int fd, csr_error **err);
int csr_ftar_writer_close (struct archive *a, csr_error **err);

/* Walk NAME in DIRFD (not followed), then what is below it when it is a
 * directory, at most CSR_FILES_MAX_DEPTH levels down and on its file system
 * only (the rest is noted in ST->skipped).  VISIT gets each entry's directory,
 * name, path REL (TOP_REL for NAME itself, then TOP_REL/a/b; a TOP_REL of
 * "" gives "a/b") and lstat; it returns 1 to go into a directory, 0 not
 * to, -1 to stop with *ERR set.  Entries count against LIM->max_entries:
 * past it, an error (E2BIG). */
typedef int (*csr_ftar_visit_fn) (void *ctx, int dirfd, const char *name, const char *rel,
                                  const struct stat *st, csr_error **err);
int csr_ftar_walk (int dirfd, const char *name, const char *top_rel, csr_ftar_visit_fn visit,
                   void *ctx, const struct csr_files_limits *lim, struct csr_files_stats *st,
                   csr_error **err);

/* Write NAME in DIRFD (and all below it) to A as ARCNAME/...: files,
 * directories, symlinks (as links); fifos, sockets, devices and what is
 * unreadable are skipped (ST->skipped).  Past LIM: an error (EFBIG for the
 * bytes, E2BIG for the entries). */
int csr_ftar_pack (struct archive *a, int dirfd, const char *name, const char *arcname,
                   const struct csr_files_limits *lim, struct csr_files_stats *st, csr_error **err);

/* The top of the tree a tar holds: the first component of its first
 * entry E ("." for the contents of a root); an entry refused by
 * csr_files_entry_name is an error (EPERM). */
int csr_ftar_top (struct archive_entry *e, char top[CSR_FILES_PATH_MAX], csr_error **err);

/* Where and how a tar is extracted. */
struct csr_ftar_dest
{
  int basefd;         /* entries are made below this directory */
  const char *top;    /* NULL: a raw tar; else each entry is TOP or below it */
  const char *rename; /* with TOP: what TOP becomes (NULL: TOP) */
  mode_t umask;       /* taken from every mode (set-id bits always go) */
  mode_t parent_mode; /* of the directories a tar implies but lacks */
};

/* Extract A's entries (FIRST, already read, then the rest) below D->basefd:
 * regular files (a temporary name with O_EXCL|O_NOFOLLOW, renamed when
 * complete), directories (merged into an existing one), symlinks (made as
 * they are, never followed), hardlinks to a file this extraction made.  An
 * entry that would leave the tree (an absolute name, "..", a path through a
 * symlink, a hardlink elsewhere) or is a device, fifo or socket is refused
 * (ST->refused) and the rest goes on.  Modes and mtimes are kept (set-id
 * bits dropped, D->umask applied); directories get theirs at the end.  An
 * existing file or symlink at an entry's path is replaced; a directory in
 * the way of a non-directory is refused.  Past LIM, out of space, or a
 * broken tar: an error, what was made before stays (every file complete). */
int csr_ftar_unpack (struct archive *a, struct archive_entry *first, const struct csr_ftar_dest *d,
                     const struct csr_files_limits *lim, struct csr_files_stats *st,
                     csr_error **err);

#endif
