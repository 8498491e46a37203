/* csrun — trusted directories: where csrun keeps what it reads back and acts
 * on (the unpacked rootfs, compiled seccomp programs, the compiled gate).
 *
 * The rule (documented in csrun-run(1), "Cache trust"):
 *  - the directory itself, and every directory csrun uses below it, is owned
 *    by the effective uid and not writable by group or others;
 *  - every directory above it is owned by root or the effective uid and not
 *    writable by group or others, unless it is sticky (/tmp): nobody else
 *    can then rename, replace or add a component of the path;
 *  - a symbolic link in the path is followed only when it is owned by root or
 *    the effective uid (it sits in a directory that passed the same check);
 *    below the directory nothing is followed;
 *  - a file read back is opened without following symlinks relative to the
 *    checked directory, and used only when it is a regular file owned by the
 *    effective uid and not writable by group or others; else it is a miss
 *    (rebuilt and replaced), never used.
 * In a user namespace that does not map host root (rootless podman), host
 * root's directories show as the overflow uid; that uid is then accepted for
 * the directories above, never for the directory itself or what is in it. */
#ifndef CSRUN_TRUST_H
#define CSRUN_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "error.h"

/* Returned (with *err set) when a path exists but is not trusted; -1 is an
 * ordinary error (errno in err->status: it can't be created, read, ...). */
#define CSR_TRUST_REFUSED (-2)

/* Open the directory PATH (absolute, or relative to the working directory)
 * after checking every component as above, creating missing ones with
 * CREATE_MODE (0 creates nothing).  WHAT names it in messages ("cache
 * directory").  Returns an O_RDONLY|O_DIRECTORY descriptor; *CANONICAL (if
 * not NULL) receives the path without symlinks, "." or "..". */
int csr_trust_open_dir (const char *what, const char *path, mode_t create_mode, char **canonical,
                        csr_error **err);

/* Open (creating with CREATE_MODE when missing and CREATE_MODE != 0) the
 * subdirectory NAME (one component) of the trusted directory DIRFD, whose
 * path DIR is for messages; no symlink is followed. */
int csr_trust_open_subdir (int dirfd, const char *dir, const char *name, mode_t create_mode,
                           csr_error **err);

/* CACHE_DIR/NAME (both created 0700 when missing), each checked as above,
 * for a cache that only saves time: a descriptor; -1 when it can't be used
 * here (a debug message under WHAT says why, *err untouched); or
 * CSR_TRUST_REFUSED with *err set when it must not be used. */
int csr_trust_open_cache (const char *what, const char *cache_dir, const char *name,
                          csr_error **err);

/* The check for what is found inside a trusted directory: a directory (or a
 * regular file when WANT_FILE) owned by the effective uid, not writable by
 * group or others.  Returns 0, or -1 with *err naming PATH and why. */
int csr_trust_check_entry (const struct stat *st, bool want_file, const char *path,
                           csr_error **err);

/* Read the regular file NAME of the trusted directory DIRFD (at most MAX
 * bytes): opened with O_NOFOLLOW|O_NONBLOCK, checked with
 * csr_trust_check_entry.  Returns 0, or -1 for a miss of any kind (absent:
 * err->status ENOENT; a symlink, FIFO, another owner, too large, ...). */
int csr_trust_read_at (int dirfd, const char *name, size_t max, char **out, size_t *len,
                       csr_error **err);

/* Replace NAME in DIRFD atomically: a temporary file made with O_EXCL, MODE,
 * written, fsync'ed, closed, renamed over NAME, the directory fsync'ed; every
 * step checked (the temporary file is removed on failure). */
int csr_trust_write_at (int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                        csr_error **err);

/* Pure part of the rule, for tests: may a directory with this owner and mode
 * be a component above a trusted directory (ANCESTOR) or the directory
 * itself?  OVERFLOW_OK accepts OVERFLOW_UID as root (ancestors only). */
bool csr_trust_dir_ok (uid_t owner, mode_t mode, uid_t euid, bool ancestor, bool overflow_ok,
                       uid_t overflow_uid);

#endif
