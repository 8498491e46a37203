/* csrun — what the rootfs cache's files share: the names in the cache
 * directory (cache.c makes them, cache-entries.c lists and prunes them) and
 * the per-tree use lock.  Not installed. */
#ifndef CSRUN_ROOTFS_CACHE_INTERNAL_H
#define CSRUN_ROOTFS_CACHE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

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

/* Open (creating it with MODE) and flock exclusively, waiting, the lock
 * file DFD/LOCK_NAME (DIR for messages): its descriptor, or -1. */
int csr_cache_lock_dir (int dfd, const char *dir, mode_t mode, csr_error **err);
/* With that lock held: remove every TMP_PREFIX entry of DFD (DIR for
 * messages), the remains of a crash; debug messages begin with WHO, and
 * SAY_EACH also names each one removed.  -1 when DFD could not be read
 * through (no descriptor, no memory), else 0. */
int csr_cache_remove_tmp (int dfd, const char *dir, const char *who, bool say_each);

/* ---------------------------------------------------------------- cache ls / prune */

struct csr_cache_entry;
struct csr_cache_list
{
  struct csr_cache_entry *v;
  size_t n, cap;
};
/* A zeroed entry at the end of L, or NULL (no memory). */
struct csr_cache_entry *csr_cache_list_add (struct csr_cache_list *l);
bool csr_cache_is_hex (const char *s);
/* Disk usage of the tree at PATH (no symlink followed, one file system). */
uint64_t csr_cache_tree_bytes (const char *path);
/* Whether a running csrun holds the use lock DFD/<HEX>.use. */
bool csr_cache_in_use (int dfd, const char *hex);
/* For removing E: the use lock DFD/USE (created if need be, checked like a
 * cache entry) flocked exclusively without waiting: its descriptor, or -1
 * with E->skipped saying why not. */
int csr_cache_take_use_lock (int dfd, const char *use, struct csr_cache_entry *e);
/* Remove the DFD/<HEX>.use files whose <HEX> is gone, when nobody holds them. */
void csr_cache_prune_orphan_locks (int dfd);

/* The package layers (cache-layers.c): CACHE_DIR/layers/<key>. */
#define LAYERS_DIR "layers"
int csr_cache_list_layers (int cfd, const char *dir, struct csr_cache_list *l, csr_error **err);
/* For prune: CACHE_DIR/layers opened (-1 in *LFD, 0 returned: there is
 * none) and its lock taken (the one builds hold) into *LOCK. */
int csr_cache_layers_open (int cfd, const char *dir, int *lfd, int *lock, csr_error **err);
/* Remove the layer E (the lock held) unless a run holds its use lock. */
int csr_cache_prune_layer (int lfd, const char *dir, struct csr_cache_entry *e, csr_error **err);
/* After the layers of L were pruned: remove each base-<sha>.known that no
 * layer left names as its base, and the orphan use locks. */
void csr_cache_prune_layers_done (int lfd, const struct csr_cache_list *l);

#endif
