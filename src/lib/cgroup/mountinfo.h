/* csrun — the one /proc/self/mountinfo parser (proc(5)): every caller that
 * needs the mounts (the cgroup hierarchy finder, the OCI "cgroup" mount,
 * --no-pivot's procfs hiding, `csrun exec --cgroup`, the rootfs space check)
 * reads them through it. */
#ifndef CSRUN_CG_MOUNTINFO_H
#define CSRUN_CG_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/error.h"

/* One line: "ID PARENT MAJ:MIN ROOT MOUNT-POINT MOUNT-OPTS [OPTIONAL...] - FSTYPE
 * SOURCE SUPER-OPTS".  ROOT, MOUNT_POINT and SOURCE have their octal escapes
 * (\040 for a space, \011, \012, \134) decoded.  OPTIONAL is the optional
 * fields as written ("shared:1 master:2"), "" when there are none.  The
 * strings point into the table's buffer. */
struct csr_mountinfo_entry
{
  int id, parent;
  unsigned major, minor;
  const char *root, *mount_point, *mount_opts, *optional;
  const char *fstype, *source, *super_opts;
};

struct csr_mountinfo
{
  struct csr_mountinfo_entry *e;
  size_t n;
  char *buf;
};

/* Parse a whole mountinfo TEXT into *MI (lines that don't have the format
 * are skipped).  -1 only on ENOMEM. */
int csr_mountinfo_parse (const char *text, struct csr_mountinfo *mi, csr_error **err);
/* Read and parse /proc/self/mountinfo. */
int csr_mountinfo_read (struct csr_mountinfo *mi, csr_error **err);
void csr_mountinfo_release (struct csr_mountinfo *mi);
/* Is WORD one of the comma-separated options of OPTS? */
bool csr_mountinfo_has_opt (const char *opts, const char *word);
/* Is PATH the mount point MNT or below it? */
bool csr_mountinfo_under (const char *path, const char *mnt);

#endif
