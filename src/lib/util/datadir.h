/* csrun — where csrun's data files are: the default rootfs tarball and the
 * policies, next to the binary (a build tree), in ../share/csrun beside it
 * (a relocated install), or under the configured $(pkgdatadir); and where
 * a kind of csrun's state goes, from the environment. */
#ifndef CSRUN_DATADIR_H
#define CSRUN_DATADIR_H

/* The default rootfs: $CSRUN_ROOTFS, else python-rootfs.tar.zst in the data
 * directories.  NULL: out of memory.  Free the result. */
char *csr_find_rootfs (void);
/* A policy file: $CSRUN_POLICY_DIR/NAME, else policies/NAME in the data
 * directories (NAME may have a directory: "seccomp/default.json").  NULL:
 * out of memory.  Free the result. */
char *csr_find_policy (const char *name);

/* One place a state directory may be (csr_pick_dir): with SUFFIX NULL, the
 * value of the variable VAR as it is when it is not empty (csrun's own
 * override, CSRUN_..._DIR); with VAR NULL, SUFFIX itself when csrun runs as
 * root; else VAR's value followed by SUFFIX when the value is an absolute
 * path (XDG_RUNTIME_DIR, HOME, ...). */
struct csr_dir_place
{
  const char *var, *suffix;
};
/* The first of PLACES (up to one with both NULL) that applies, into *DIR
 * (malloc'ed): 0; 1 when none does; -1 out of memory. */
int csr_pick_dir (const struct csr_dir_place *places, char **dir);

#endif
