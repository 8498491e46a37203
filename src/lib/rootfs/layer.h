/* csrun — package layers: Debian packages added to a cached rootfs without
 * root, as a read-only tree mounted above it (the jail's overlay gets it as
 * the upper-most lowerdir).
 *
 * A layer is CACHE_DIR/layers/<key>, the key the sha256 of the base
 * rootfs's digest and the sorted, deduplicated package names: a second
 * request for the same set is a cache hit (no apt call at all).  Next to
 * the tree: <key>.manifest (every entry, as a rootfs tree's manifest) and
 * <key>.json (the packages and versions in it, what the base already had,
 * the layer's digest: the sha256 of <key>.manifest).
 *
 * Building one (layer.c, layer-apt.c, layer-tree.c), as the invoking user:
 *  1. apt-get -s install resolves the dependency closure (no recommends,
 *     first alternatives) against the base's dpkg status when the base has
 *     one (var/lib/dpkg/status: a debootstrap rootfs), else against an empty
 *     status;
 *  2. apt-get download fetches them into a private directory of the cache
 *     (nothing under /var is written; the host's apt lists are read);
 *  3. each .deb is extracted (dpkg-deb -x) into a scratch directory.  With
 *     no dpkg status in the base, a package counts as part of the base when
 *     one of its files (not under usr/share/{doc,man,info,lintian,bug,locale};
 *     a doc copyright file does not count either) exists in the base tree,
 *     its directories resolved through the base's symlinks (lib ->
 *     usr/lib): it is dropped.  The verdicts are kept in
 *     layers/base-<sha256>.known, so that a later build does not download
 *     a package the base has again.  The others are merged into the layer:
 *     paths resolved the same way, nothing the base has is replaced (the
 *     base wins), usr/share/{man,info,lintian,bug} and the documentation
 *     but copyright files left out, setuid/setgid bits cleared, device
 *     nodes, FIFOs and sockets dropped, everything owned by the invoking
 *     user, directories 0555, files 0444 or 0555; the postinst scripts'
 *     literal `update-alternatives --install` links are made;
 *  4. the tree, its manifest and json are flushed and renamed into place
 *     under the cache lock (CACHE_DIR/layers/.lock).
 * Maintainer scripts are not run (no postinst: no .pyc compiled, no
 * triggers, no debconf; only the alternatives' links above are made).
 * Debian's python3-* packages need none of them: their modules are in
 * /usr/lib/python3/dist-packages, which the gate puts on sys.path.
 *
 * Before every use the layer is checked: the tree, its manifest and every
 * entry owned by the effective uid, not writable by group or others, no
 * special files, each entry as its manifest says (type, mode, size) and
 * none more.  A layer that fails is rebuilt, never used.
 *
 * Whoever uses a layer (a run with --with, `csrun rootfs add`) holds a
 * shared flock on LAYERS/<key>.use from before the check until
 * csr_layer_free, as a run does with its rootfs tree's CACHE_DIR/<sha>.use
 * (csr_rootfs_use_lock); `csrun cache prune` removes a layer only with an
 * exclusive one, taken without waiting (rootfs/cache-layers.c). */
#ifndef CSRUN_LAYER_H
#define CSRUN_LAYER_H

#include <stdbool.h>
#include <stddef.h>

#include "../util/digest.h"
#include "../util/error.h"

/* A package csrun could not resolve or download (unknown name, no
 * candidate, no network): *err names it.  `csrun` exits 2. */
#define CSR_LAYER_BAD_PACKAGE (-2)

#define CSR_LAYER_MAX_PACKAGES 64

struct csr_layer_pkg
{
  char *name;
  char *version;
  char *arch;
  bool in_base; /* dropped: the base rootfs has it */
};

struct csr_layer
{
  char *dir; /* absolute path of the tree */
  char key[CSR_SHA256_HEX_LEN + 1];
  char digest[CSR_SHA256_HEX_LEN + 1]; /* sha256 of the layer's manifest */
  char base_sha256[CSR_SHA256_HEX_LEN + 1];
  char **asked; /* the packages asked for: sorted, unique */
  size_t n_asked;
  struct csr_layer_pkg *pkgs; /* the closure: in the layer, or in_base */
  size_t n_pkgs;
  unsigned long long bytes; /* regular files in the layer */
  size_t files;             /* entries in the layer */
  bool built_now;           /* this call built it (a cache miss) */
  char *rebuilt_why;        /* a cached copy failed its check: why (it was rebuilt) */
  int use_fd; /* the layer's use lock (LAYERS/<key>.use, shared), held until freed; -1: none */
};

/* Make sure the layer of PKGS (N names, Debian package names) over the
 * cached rootfs tree BASE_DIR (whose tarball's digest is BASE_SHA256)
 * exists in CACHE_DIR (its canonical path) and passes its check; build it
 * when it does not.  *OUT describes it.  Returns 0, CSR_LAYER_BAD_PACKAGE
 * (bad name, apt could not resolve or download) or -1 (csrun failed). */
int csr_layer_ensure (const char *base_dir, const char *base_sha256, const char *cache_dir,
                      const char *const *pkgs, size_t n, struct csr_layer **out, csr_error **err);
void csr_layer_free (struct csr_layer *l);

struct csr_jgen;
/* Into the open map of W: L's "asked", "packages", "in_base" (each package
 * {name, version, arch}), "files" and "bytes" (its json file and
 * `csrun rootfs add --json` share them). */
void csr_layer_jgen_contents (struct csr_jgen *w, const struct csr_layer *l);

/* Is NAME a well-formed Debian package name (lower case letters, digits,
 * '+', '-', '.'; two characters at least, starting alphanumeric)?  Pure. */
bool csr_layer_valid_name (const char *name);

/* The key of the layer of the N names PKGS over the base BASE_SHA256:
 * sha256 of "csrun-layer 1\n" BASE "\n" then each sorted unique name and
 * "\n".  Pure (unit-tested). */
int csr_layer_key (const char *base_sha256, const char *const *pkgs, size_t n,
                   char key[CSR_SHA256_HEX_LEN + 1], csr_error **err);

/* ---------------------------------------------------------------- internal (layer-apt.c) */

/* Resolve the closure of PKGS against the dpkg status file STATUS (an empty
 * file: nothing installed) with apt-get -s, private files under WORK. */
int csr_layer_apt_resolve (const char *work, const char *status, char *const *pkgs, size_t n,
                           struct csr_layer_pkg **out, size_t *n_out, csr_error **err);
void csr_layer_pkgs_free (struct csr_layer_pkg *p, size_t n);
/* Download the packages of P not in_base into DIR (apt-get download). */
int csr_layer_apt_download (const char *work, const char *dir, const struct csr_layer_pkg *p,
                            size_t n, csr_error **err);
/* The file apt-get download made for P in DIR (malloc'ed path). */
char *csr_layer_deb_path (const char *dir, const struct csr_layer_pkg *p);
/* Run ARGV (argv[0] found through PATH) in CWD (NULL: the current one),
 * output and errors into *OUT (at most 64 KiB, NUL-terminated; NULL: none).
 * Returns its exit status (>= 0; 128+N: killed by signal N) or -1. */
int csr_layer_spawn (char *const *argv, const char *cwd, char **out, csr_error **err);

/* ---------------------------------------------------------------- internal (layer-tree.c) */

struct csr_manifest;

/* Extract the .deb DEB's files into the empty directory SCRATCH (dpkg-deb
 * -x) and its control files into CONTROL (dpkg-deb -e). */
int csr_layer_extract (const char *deb, const char *scratch, const char *control, csr_error **err);
/* Does the base tree BASE_FD hold one of the files of the extracted
 * package SCRATCH_FD (see the rule above)? */
int csr_layer_in_base (int base_fd, int scratch_fd, bool *in_base, csr_error **err);
/* Move the extracted package SCRATCH_FD into the layer LAYER_FD (see the
 * rule above). */
int csr_layer_merge (int base_fd, int scratch_fd, int layer_fd, csr_error **err);
/* The one maintainer-script action csrun reproduces: the symbolic link
 * LINK -> TARGET of an `update-alternatives --install` (both absolute),
 * made in the layer when neither the base nor the layer has LINK and the
 * target exists. */
int csr_layer_add_alternative (int base_fd, int layer_fd, const char *link, const char *target,
                               csr_error **err);
/* Make the finished layer read-only (but its top, which the caller makes
 * 0555 once it is in place) and record every entry in M. */
int csr_layer_seal (int layer_fd, struct csr_manifest *m, csr_error **err);
/* The check before use: 0 (intact), 1 (*WHY says what is wrong) or -1. */
int csr_layer_check (int layer_fd, const struct csr_manifest *m, char **why, csr_error **err);

#endif
