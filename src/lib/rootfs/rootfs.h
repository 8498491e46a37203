/* csrun — the Python rootfs: a tarball unpacked once into a per-user cache,
 * verified entry by entry, then reused read-only; or a directory used as is. */
#ifndef CSRUN_ROOTFS_H
#define CSRUN_ROOTFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "../util/error.h"

struct csr_rootfs
{
  char *source;      /* what was asked for (tarball or directory path) */
  char *dir;         /* absolute path of the tree to use as / */
  char *sha256;      /* hex digest of the tarball; NULL when source is a directory */
  bool unpacked_now; /* this call unpacked the tarball (cold cache) */
};

/* Default cache directory: $CSRUN_CACHE_DIR, else $XDG_CACHE_HOME/csrun/rootfs, else
 * /var/cache/csrun/rootfs when running as root, else $HOME/.cache/csrun/rootfs.
 * Returns a malloc'ed string; the directory is checked (util/trust.h) when opened. */
int csr_rootfs_cache_dir (char **out, csr_error **err);
/* The same; *SOURCE says where it came from ("CSRUN_CACHE_DIR",
 * "XDG_CACHE_HOME", "HOME" or "default"), for messages. */
int csr_rootfs_cache_dir_from (char **out, const char **source, csr_error **err);

/* Resolve SOURCE (a tarball or a directory) to a usable tree.  For a tarball:
 * fast path — a (dev, inode, size, mtime) index entry in CACHE_DIR points at an
 * existing <sha256> tree; slow path — hash the tarball, take a lock, and if
 * CACHE_DIR/<sha256> does not exist unpack into a temporary directory, fsync
 * and rename it into place.  CACHE_DIR NULL means csr_rootfs_cache_dir(). */
int csr_rootfs_resolve (const char *source, const char *cache_dir, struct csr_rootfs **out,
                        csr_error **err);
void csr_rootfs_free (struct csr_rootfs *r);

/* Check one archive entry before anything is written (pure, unit-tested).
 * PATH is the entry name, MODE its st_mode (type + permission bits),
 * LINKTARGET the symlink target (symlinks) or the hardlink source (hardlinks),
 * or NULL.  Rejects absolute paths, "..", device nodes, FIFOs, sockets,
 * setuid/setgid bits, and hardlinks whose source is absolute or contains "..".
 * Symlink targets may be absolute: they are resolved inside the jail. */
int csr_tar_entry_check (const char *path, mode_t mode, const char *linktarget, bool is_hardlink,
                         csr_error **err);

/* Unpack the archive at ARCHIVE_PATH into the existing empty directory DEST.
 * Every entry goes through csr_tar_entry_check(); an entry whose parent path
 * goes through a symlink of the archive is refused.  On error DEST may hold a
 * partial tree: the caller removes it. */
int csr_rootfs_unpack (const char *archive_path, const char *dest, csr_error **err);

#endif
