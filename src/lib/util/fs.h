/* csrun — small file-system helpers. */
#ifndef CSRUN_FS_H
#define CSRUN_FS_H

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* write(2) until done (EINTR-safe). */
int csr_write_all (int fd, const void *buf, size_t len, csr_error **err);
/* Read exactly N bytes from FD (EINTR-safe): 0; 1 when FD ended before
 * them (no error set); -1 with "WHAT: strerror". */
int csr_read_exact (int fd, void *buf, size_t n, const char *what, csr_error **err);
/* Read a whole regular file (at most MAX bytes: larger is an error).  *out is
 * NUL-terminated; *len excludes the NUL. */
int csr_read_file (const char *path, size_t max, char **out, size_t *len, csr_error **err);
int csr_read_fd (int fd, size_t max, char **out, size_t *len, csr_error **err);
/* mkdir -p with MODE for created components. */
int csr_mkdir_p (const char *path, mode_t mode, csr_error **err);
/* rm -rf PATH (does not follow symlinks; stays on one file system). */
int csr_rm_rf (const char *path, csr_error **err);
/* A directory stream on FD (which it then owns), or NULL: FD < 0, or
 * fdopendir failed (FD closed). */
DIR *csr_fdopendir_or_close (int fd);

/* Best effort: set the mtime of NAME in DIRFD (no symlink followed) to now
 * when it is at least AGE_S seconds old: a cache entry's "last use" (csrun
 * cache ls/prune), one write per AGE_S rather than one per run. */
void csr_touch_if_older (int dirfd, const char *name, long age_s);

/* Files that appear whole or not at all, made relative to a directory
 * descriptor: a temporary name (".csrun-tmp.PID.RANDOM"), then a rename
 * over the final name. */
#define CSR_TMP_NAME_MAX 64
/* A fresh temporary name in NAME (for symlinkat, linkat, ...). */
void csr_tmp_name (char name[CSR_TMP_NAME_MAX]);
/* A new regular file in DIRFD under a fresh temporary name (O_EXCL,
 * O_NOFOLLOW; MODE, under the umask); NAME receives the name.  Returns its
 * descriptor (O_WRONLY). */
int csr_tmp_create_at (int dirfd, mode_t mode, char name[CSR_TMP_NAME_MAX], csr_error **err);
/* Close FD (checked: a late write error such as ENOSPC shows there) and
 * rename NAME over LEAF in DIRFD; on any failure NAME is removed.  FD is
 * closed either way. */
int csr_tmp_commit_at (int dirfd, const char *name, int fd, const char *leaf, csr_error **err);

/* Write a file atomically: tmp file in the same directory, fsync, rename. */
int csr_write_file_atomic (const char *path, const void *data, size_t len, mode_t mode,
                           csr_error **err);

#endif
