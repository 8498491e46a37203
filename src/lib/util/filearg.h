/* csrun — the arguments of `csrun run --in`, `--mount` and `--out-path`:
 * parsing and checking, nothing else (pure; unit-tested). */
#ifndef CSRUN_FILEARG_H
#define CSRUN_FILEARG_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* --in PATH[:DEST]: a host path, copied to DEST in the jail. */
struct csr_in_arg
{
  char *src;  /* as given */
  char *dest; /* absolute, checked, under /work or /tmp */
};

/* --mount SRC:DST[:ro|rw]: a host directory bound at DST. */
struct csr_mount_arg
{
  char *src;
  char *dst; /* absolute, checked, /data, /mnt or below them, or below /work */
  bool rw;
};

/* A path inside the jail: absolute, no empty, "." or ".." component, no
 * trailing slash, at most 1024 bytes. */
bool csr_jail_path_ok (const char *p);

/* P is ROOT or below it (ROOT has no trailing slash). */
bool csr_path_under (const char *p, const char *root);

/* Parse ARG into *IN (strings allocated).  DEST defaults to /work/BASENAME;
 * it must be below /work or /tmp, and not /work/snippet.py. */
int csr_in_arg_parse (const char *arg, struct csr_in_arg *in, csr_error **err);

/* Parse ARG into *M: DST below /work, or /data, /mnt or below them; ro by default. */
int csr_mount_arg_parse (const char *arg, struct csr_mount_arg *m, csr_error **err);

/* Two --in with the same DEST, an --in DEST at or below a --mount DST (it
 * would write into the host directory) or above it, overlapping --mount
 * DSTs: -1 and *ERR names the clash; else 0. */
int csr_files_args_check (const struct csr_in_arg *in, size_t n_in, const struct csr_mount_arg *m,
                          size_t n_m, csr_error **err);

/* REL (relative to /work) is selected by GLOBS (fnmatch with FNM_PATHNAME):
 * it or one of its parent directories matches one of them.  No globs:
 * everything is. */
bool csr_out_glob_match (const char *rel, const char *const *globs, size_t n_globs);

void csr_in_arg_release (struct csr_in_arg *in);
void csr_mount_arg_release (struct csr_mount_arg *m);

#endif
