/* csrun — where csrun's data files are: the default rootfs tarball and the
 * policies, next to the binary (a build tree), in ../share/csrun beside it
 * (a relocated install), or under the configured $(pkgdatadir). */
#ifndef CSRUN_DATADIR_H
#define CSRUN_DATADIR_H

/* The default rootfs: $CSRUN_ROOTFS, else python-rootfs.tar.zst in the data
 * directories.  NULL: out of memory.  Free the result. */
char *csr_find_rootfs (void);
/* A policy file: $CSRUN_POLICY_DIR/NAME, else policies/NAME in the data
 * directories (NAME may have a directory: "seccomp/default.json").  NULL:
 * out of memory.  Free the result. */
char *csr_find_policy (const char *name);

#endif
