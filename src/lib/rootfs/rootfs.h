/* csrun — the Python rootfs: a tarball unpacked once into a per-user cache,
 * verified entry by entry, then reused read-only; or a directory used as is. */
#ifndef CSRUN_ROOTFS_H
#define CSRUN_ROOTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

struct csr_rootfs
{
  char *source;      /* what was asked for (tarball or directory path) */
  char *dir;         /* absolute path of the tree to use as / */
  char *sha256;      /* hex digest of the tarball; NULL when source is a directory */
  bool unpacked_now; /* this call unpacked the tarball (cold cache) */
  int use_fd;        /* the tree's use lock (cache-internal.h), held until freed; -1: none */
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

/* ---------------------------------------------------------------- manifest (manifest.c) */

/* One entry of an unpacked tree as it is on disk after the unpack. */
struct csr_manifest_entry
{
  char type;     /* 'f' regular file, 'd' directory, 'l' symlink */
  mode_t mode;   /* permission bits (07777) */
  uint64_t size; /* 'f': bytes; 'l': length of the target; 'd': 0 */
  char *data;    /* 'f': sha256 (hex) of the contents; 'l': the target; 'd': NULL */
  char *path;    /* relative to the top of the tree, normalised; "." is the top */
};

/* What a tree must hold: CACHE/<sha256>.manifest, written at unpack time. */
struct csr_manifest
{
  char *source;    /* absolute path of the tarball it was unpacked from (may be NULL) */
  char sha256[65]; /* the tarball's digest ("" when unknown) */
  uint64_t bytes;  /* total size of the regular files (each inode once) */
  struct csr_manifest_entry *entries;
  size_t n, cap;
};

void csr_manifest_release (struct csr_manifest *m);
/* Append an entry (DATA and PATH are copied); returns its index or -1 (ENOMEM). */
ssize_t csr_manifest_add (struct csr_manifest *m, char type, mode_t mode, uint64_t size,
                          const char *data, const char *path, csr_error **err);
/* Serialise M: "csrun-manifest 1", header lines, then one line an entry:
 * TYPE MODE SIZE DATA PATH (DATA "-" for directories; DATA and PATH escaped:
 * bytes <= 0x20, 0x7f and '\\' as \ooo).  *OUT is malloc'ed. */
int csr_manifest_format (const struct csr_manifest *m, char **out, size_t *len, csr_error **err);
int csr_manifest_parse (const char *text, size_t len, struct csr_manifest *m, csr_error **err);
/* Write M as DIRFD/NAME, read-only (0444): temporary file, fsync, rename. */
int csr_manifest_write (int dirfd, const char *name, const struct csr_manifest *m, csr_error **err);
int csr_manifest_read (int dirfd, const char *name, struct csr_manifest *m, csr_error **err);

/* ---------------------------------------------------------------- unpack options */

struct csr_unpack_opts
{
  bool read_only;                /* files 0444 (0555 with any x bit), directories 0555 */
  struct csr_manifest *manifest; /* NULL, or receives every entry of the tree */
};

/* csr_rootfs_unpack with options (O may be NULL).  Every data block is
 * checked: a failed or short write fails the unpack (libarchive alone turns
 * it into a warning and zero-fills the file).  Out of space (ENOSPC,
 * EDQUOT) gives "no space left on MOUNTPOINT while unpacking ENTRY (needs N
 * MiB)", N about the space the whole tree takes (files rounded up to 4 KiB
 * blocks, directories, the manifest). */
int csr_rootfs_unpack_ex (const char *archive_path, const char *dest,
                          const struct csr_unpack_opts *o, csr_error **err);

/* The message for running out of space under DIR while writing WHAT. */
int csr_rootfs_nospace (const char *dir, const char *what, uint64_t need_bytes, csr_error **err);

/* ---------------------------------------------------------------- verify (verify.c) */

#define CSR_DAMAGE_SHOWN 4

/* What differs between a tree and its manifest. */
struct csr_tree_damage
{
  size_t n;                      /* damaged entries */
  char *shown[CSR_DAMAGE_SHOWN]; /* "PATH: what differs", the first few */
  size_t n_shown;
  bool no_manifest; /* the tree has no (readable) manifest */
};

void csr_tree_damage_release (struct csr_tree_damage *d);
/* Compare the tree open at TREE_FD with M: type, mode, size and symlink
 * target of every entry; with FULL also the sha256 of every regular file.
 * Fills *D (n == 0: intact).  Returns -1 only on a csrun failure. */
int csr_manifest_check (int tree_fd, const struct csr_manifest *m, bool full,
                        struct csr_tree_damage *d, csr_error **err);

/* Verify the cached tree R (a tarball's): metadata first, then contents.
 * When damaged, unpack it again (once) from R->source.  *REPAIRED tells
 * whether it did; *D says what was wrong.  A directory rootfs is left
 * alone.  Returns -1 when the check or the re-unpack failed. */
int csr_rootfs_check_repair (const struct csr_rootfs *r, struct csr_tree_damage *d, bool *repaired,
                             csr_error **err);

/* ---------------------------------------------------------------- cache maintenance (cache.c) */

/* ---------------------------------------------------------------- cache entries (cache-entries.c)
 */

enum csr_cache_kind
{
  CSR_CACHE_ROOTFS,  /* CACHE_DIR/<sha256>: an unpacked tree (+ .manifest, .use) */
  CSR_CACHE_LAYER,   /* CACHE_DIR/layers/<key>: a package layer (+ .manifest, .json, .use) */
  CSR_CACHE_GATE,    /* CACHE_DIR/gate/<key>.bin: a compiled gate */
  CSR_CACHE_SECCOMP, /* CACHE_DIR/seccomp/<key>.bpf: a compiled seccomp program */
};
/* "rootfs", "layer", "gate", "seccomp" */
const char *csr_cache_kind_name (enum csr_cache_kind k);

struct csr_cache_pkg
{
  char *name, *version;
};

struct csr_cache_entry
{
  enum csr_cache_kind kind;
  char *name;          /* "<sha256>", "layers/<key>", "gate/<key>.bin", "seccomp/<key>.bpf" */
  char *path;          /* absolute */
  uint64_t bytes;      /* disk usage (blocks): a tree with its manifest */
  int64_t last_use;    /* seconds since the epoch: the mtime of a tree's .use stamp (refreshed
                          by runs at most hourly) or of the tree; a file's mtime */
  bool in_use;         /* a tree or layer whose use lock a running csrun holds */
  bool removed;        /* csr_cache_prune removed it */
  const char *skipped; /* csr_cache_prune kept it: why ("in use by a running csrun", ...) */
  /* A layer's, from its .json (NULL, 0 when it can't be read): */
  char **asked;               /* the packages asked for, NULL-terminated */
  struct csr_cache_pkg *pkgs; /* the packages in the layer */
  size_t n_pkgs;
  char *base_sha256; /* the base rootfs tarball's digest */
};

/* What CACHE_DIR (trust-checked, never created; missing: nothing) holds
 * that csrun made: trees owned by us with a digest for a name, the same
 * in layers/, and our regular files in gate/ and seccomp/; sorted by kind
 * and name.  No symlink is followed. */
int csr_cache_list (const char *cache_dir, struct csr_cache_entry **out, size_t *n,
                    csr_error **err);
/* Remove those entries (OLDER_THAN_S >= 0: only those whose last use is at
 * least that old), under the cache lock; a tree is removed only when no
 * running csrun holds its use lock (taken without waiting), renamed aside
 * first, then its manifest, use lock and by-stat links; a layer the same
 * way (under the layers' lock too), with its manifest, json and use lock,
 * and a layers/base-<sha>.known once no layer over that base is left.
 * *OUT lists every entry with removed or skipped set. */
int csr_cache_prune (const char *cache_dir, int64_t older_than_s, struct csr_cache_entry **out,
                     size_t *n, csr_error **err);
void csr_cache_entries_release (struct csr_cache_entry *v, size_t n);

/* The digests of the trees in CACHE_DIR (NULL: the default), sorted. */
int csr_rootfs_cache_trees (const char *cache_dir, char ***hexes, size_t *n, csr_error **err);
/* Verify CACHE_DIR/HEX against CACHE_DIR/HEX.manifest (FULL: digests too). */
int csr_rootfs_cache_verify (const char *cache_dir, const char *hex, bool full,
                             struct csr_tree_damage *d, csr_error **err);

enum csr_repair_outcome
{
  CSR_REPAIR_UNPACKED, /* unpacked again from the tarball */
  CSR_REPAIR_REMOVED,  /* no usable tarball: the tree was removed */
  CSR_REPAIR_ALREADY,  /* another csrun replaced the tree meanwhile */
};

/* Replace the damaged tree CACHE_DIR/HEX, under the cache lock: unpack it
 * again from SOURCE (NULL: the source its manifest records) when that file
 * still has digest HEX, else remove the tree so that the next run unpacks
 * afresh (REMOVE_IF_NO_SOURCE) or fail.  EXPECT_INO, when not 0, is the inode
 * of the tree that was found damaged: a different one means another csrun
 * repaired it already.  *USED receives the tarball used (malloc'ed) or NULL. */
int csr_rootfs_cache_repair (const char *cache_dir, const char *hex, const char *source,
                             bool remove_if_no_source, ino_t expect_ino,
                             enum csr_repair_outcome *outcome, char **used, csr_error **err);

#endif
