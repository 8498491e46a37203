/* csrun — what the rootfs cache's files share: the names in the cache
 * directory (cache.c makes them, cache-entries.c lists and prunes them) and
 * the per-tree use lock.  Not installed. */
#ifndef CSRUN_ROOTFS_CACHE_INTERNAL_H
#define CSRUN_ROOTFS_CACHE_INTERNAL_H

#define LOCK_NAME ".lock"
#define INDEX_DIR "by-stat"
#define TMP_PREFIX ".tmp-"
#define EMPTY_DIR ".empty"
#define MANIFEST_SUFFIX ".manifest"
/* CACHE_DIR/<HEX>.use: every run that uses the tree <HEX> holds a shared
 * flock on it for as long as it runs; `csrun cache prune` removes a tree
 * only with an exclusive one (taken without waiting).  Its mtime is the
 * tree's last use (refreshed at most once per USE_STAMP_SEC). */
#define USE_SUFFIX ".use"
#define USE_STAMP_SEC 3600

/* Take the shared use lock of the tree HEX in the cache directory CACHE_FD
 * (DIR for messages): a descriptor to keep open while the tree is used, or
 * -1 when the lock can't be had here (a cache we can't write: debug
 * message; the run goes on without it). */
int csr_rootfs_use_lock (int cache_fd, const char *dir, const char *hex);

#endif
