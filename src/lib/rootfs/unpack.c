/* csrun — unpack a rootfs archive below a directory, entry by entry, refusing
 * anything that could write outside it or smuggle in special files. */
#include "config.h"
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "../cgroup/mountinfo.h"
#include "../util/archive-lib.h"
#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/path.h"

#define UNPACK_BLOCK_SIZE (128 * 1024)

/* libarchive: util/archive-lib.h (loaded on first use). */
#define la csr_la
#define la_load csr_la_load

/* ---------------------------------------------------------------- path map */

/* What the archive put at a path so far: the type of its latest entry, and
 * whether any entry ever made it a symlink. */
enum
{
  KIND_OTHER,
  KIND_REG,
  KIND_DIR,
  KIND_LNK,
};

struct path_slot
{
  char *key; /* NULL: free slot */
  uint64_t hash;
  unsigned char kind;
  bool was_symlink;
  ssize_t mi; /* its entry in the manifest, or -1 */
};

struct path_map
{
  struct path_slot *slots;
  size_t cap; /* a power of two */
  size_t count;
};

static uint64_t
hash_bytes (const char *s, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
  for (size_t i = 0; i < n; i++)
    {
      h ^= (unsigned char)s[i];
      h *= 0x100000001b3ULL;
    }
  return h;
}

static struct path_slot *
map_find (struct path_map *m, const char *key, size_t n)
{
  if (m->cap == 0)
    return NULL;
  uint64_t h = hash_bytes (key, n);
  for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
    {
      struct path_slot *s = &m->slots[i];
      if (s->key == NULL)
        return NULL;
      if (s->hash == h && strncmp (s->key, key, n) == 0 && s->key[n] == '\0')
        return s;
    }
}

static int
map_grow (struct path_map *m)
{
  size_t ncap = m->cap ? m->cap * 2 : 1024;
  struct path_slot *n = calloc (ncap, sizeof *n);
  if (n == NULL)
    return -1;
  for (size_t i = 0; i < m->cap; i++)
    {
      struct path_slot *s = &m->slots[i];
      if (s->key == NULL)
        continue;
      size_t j = s->hash & (ncap - 1);
      while (n[j].key != NULL)
        j = (j + 1) & (ncap - 1);
      n[j] = *s;
    }
  free (m->slots);
  m->slots = n;
  m->cap = ncap;
  return 0;
}

/* The slot for KEY, created if needed; NULL when out of memory. */
static struct path_slot *
map_get (struct path_map *m, const char *key)
{
  size_t n = strlen (key);
  struct path_slot *s = map_find (m, key, n);
  if (s)
    return s;
  if ((m->count + 1) * 10 > m->cap * 7 && map_grow (m) < 0)
    return NULL;
  uint64_t h = hash_bytes (key, n);
  size_t i = h & (m->cap - 1);
  while (m->slots[i].key != NULL)
    i = (i + 1) & (m->cap - 1);
  s = &m->slots[i];
  s->key = strdup (key);
  if (s->key == NULL)
    return NULL;
  s->hash = h;
  s->kind = KIND_OTHER;
  s->was_symlink = false;
  s->mi = -1;
  m->count++;
  return s;
}

static void
map_free (struct path_map *m)
{
  for (size_t i = 0; i < m->cap; i++)
    free (m->slots[i].key);
  free (m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}

/* ---------------------------------------------------------------- entries */

/* "./a//b/" -> "a/b"; "./" -> "".  The name was checked: no "..". */
static char *
normalize (const char *path)
{
  char *out = malloc (strlen (path) + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  const char *p = path, *c;
  size_t n;
  while ((c = csr_path_next (&p, &n)) != NULL)
    if (!csr_path_is_dot (c, n))
      {
        if (o > 0)
          out[o++] = '/';
        memcpy (out + o, c, n);
        o += n;
      }
  out[o] = '\0';
  return out;
}

struct unpack
{
  const char *archive_path;
  const char *dest;
  struct archive *in;
  struct archive *out;
  struct path_map map;
  size_t entries;
  size_t symlinks;
  bool read_only;
  struct csr_manifest *m; /* NULL: no manifest wanted */
  size_t *implicit;       /* manifest indices of parent directories the archive lacks */
  size_t n_implicit, cap_implicit;
  char *nospace; /* the entry being written when space ran out */
};

/* Refuse NORM when one of its proper prefixes was a symlink of the archive. */
static int
check_prefixes (struct unpack *u, const char *name, const char *norm, csr_error **err)
{
  if (u->symlinks == 0)
    return 0;
  for (const char *p = strchr (norm, '/'); p; p = strchr (p + 1, '/'))
    {
      struct path_slot *s = map_find (&u->map, norm, (size_t)(p - norm));
      if (s && s->was_symlink)
        return csr_error_set (err, 0, "entry '%s' goes through symlink '%.*s'", name,
                              (int)(p - norm), norm);
    }
  return 0;
}

/* libarchive's errno for an error, or 0 when it has none (ARCHIVE_ERRNO_MISC). */
static int
out_errno (struct archive *a)
{
  int e = la.archive_errno (a);
  return e > 0 ? e : 0;
}

/* ---------------------------------------------------------------- out of space */

static void
add_read_formats (struct archive *in)
{
  la.archive_read_support_filter_all (in);
  /* What archive_read_support_format_all() enables, but mtree: an mtree
   * "archive" names host files that the reader opens and copies from. */
  la.archive_read_support_format_7zip (in);
  la.archive_read_support_format_ar (in);
  la.archive_read_support_format_cab (in);
  la.archive_read_support_format_cpio (in);
  la.archive_read_support_format_empty (in);
  la.archive_read_support_format_iso9660 (in);
  la.archive_read_support_format_lha (in);
  la.archive_read_support_format_rar (in);
  la.archive_read_support_format_rar5 (in);
  la.archive_read_support_format_tar (in);
  la.archive_read_support_format_warc (in);
  la.archive_read_support_format_xar (in);
  la.archive_read_support_format_zip (in);
}

/* About the space the tree of the archive at PATH takes: its regular files
 * rounded up to 4 KiB blocks, 4 KiB for every other entry, and a manifest
 * line for each (a second pass over the headers: only when an unpack ran
 * out of space). */
static uint64_t
archive_bytes (const char *path)
{
  const uint64_t block = 4096;
  uint64_t total = 0;
  cleanup_close int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return 0;
  cleanup_la_read struct archive *in = la.archive_read_new ();
  if (in == NULL)
    return 0;
  add_read_formats (in);
  if (la.archive_read_open_fd (in, fd, UNPACK_BLOCK_SIZE) != ARCHIVE_OK)
    return 0;
  struct archive_entry *e;
  while (la.archive_read_next_header (in, &e) >= ARCHIVE_WARN)
    {
      if (S_ISREG (la.archive_entry_mode (e)) && la.archive_entry_hardlink (e) == NULL
          && la.archive_entry_size_is_set (e) && la.archive_entry_size (e) > 0)
        total += ((uint64_t)la.archive_entry_size (e) + block - 1) / block * block;
      else if (la.archive_entry_hardlink (e) == NULL)
        total += block;
      total += 128; /* its manifest line */
      if (la.archive_read_data_skip (in) < ARCHIVE_WARN)
        break;
    }
  return total;
}

/* The mount point of the file system DIR is on (longest matching mount
 * point of /proc/self/mountinfo with its device), or DIR itself. */
static void
mount_point (const char *dir, char *out, size_t size)
{
  snprintf (out, size, "%s", dir);
  struct stat st;
  cleanup_free char *real = realpath (dir, NULL);
  if (real == NULL || stat (real, &st) < 0)
    return;
  struct csr_mountinfo mi;
  csr_error *ignored = NULL;
  if (csr_mountinfo_read (&mi, &ignored) < 0)
    {
      csr_error_free (ignored);
      return;
    }
  size_t best = 0;
  for (size_t k = 0; k < mi.n; k++)
    {
      const struct csr_mountinfo_entry *e = &mi.e[k];
      if (e->major != major (st.st_dev) || e->minor != minor (st.st_dev))
        continue;
      size_t n = strlen (e->mount_point);
      if (csr_mountinfo_under (real, e->mount_point) && n >= best)
        {
          best = n;
          snprintf (out, size, "%s", e->mount_point);
        }
    }
  csr_mountinfo_release (&mi);
}

int
csr_rootfs_nospace (const char *dir, const char *what, uint64_t need_bytes, csr_error **err)
{
  char mnt[PATH_MAX];
  mount_point (dir, mnt, sizeof mnt);
  uint64_t mib = (need_bytes + (1u << 20) - 1) >> 20;
  return csr_error_set (err, 0, "no space left on %s while unpacking %s (needs %" PRIu64 " MiB)",
                        mnt, what, mib);
}

/* An error of the writer for entry NAME.  Out of space is told once the
 * current directory is back (the message needs the paths as given). */
static int
out_error (struct unpack *u, const char *name, csr_error **err)
{
  int e = out_errno (u->out);
  if ((e == ENOSPC || e == EDQUOT) && u->nospace == NULL)
    u->nospace = strdup (name);
  return csr_error_set (err, e, "entry '%s': %s", name, la.archive_error_string (u->out));
}

/* ---------------------------------------------------------------- data */

static const unsigned char zeros[64 * 1024];

static void
hash_zeros (struct csr_sha256 *h, uint64_t n)
{
  while (n > 0)
    {
      size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
      csr_sha256_update (h, zeros, k);
      n -= k;
    }
}

/* Copy the data of entry E to the file libarchive opened for it, hashing
 * what ends up on disk into H when not NULL (holes read as zeros).  Any
 * result of archive_write_data_block() but ARCHIVE_OK is a failure:
 * libarchive reports a failed write(2) as a mere warning and then extends
 * the file to its full size with ftruncate(), i.e. zero-fills what was not
 * written. */
static int
copy_blocks (struct unpack *u, const char *name, struct archive_entry *e, struct csr_sha256 *h,
             uint64_t *size_out, csr_error **err)
{
  bool sized = la.archive_entry_size_is_set (e) && la.archive_entry_size (e) >= 0;
  uint64_t want = sized ? (uint64_t)la.archive_entry_size (e) : 0;
  uint64_t pos = 0;
  for (;;)
    {
      const void *buf;
      size_t size;
      la_int64_t offset;
      int r = la.archive_read_data_block (u->in, &buf, &size, &offset);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        return csr_error_set (err, 0, "archive '%s': entry '%s': %s", u->archive_path, name,
                              la.archive_error_string (u->in));
      if (offset < 0 || (uint64_t)offset < pos || (sized && (uint64_t)offset + size > want))
        return csr_error_set (err, 0, "archive '%s': entry '%s': data block out of place",
                              u->archive_path, name);
      if (size == 0)
        continue;
      int w = la.archive_write_data_block (u->out, buf, size, offset);
      if (w != ARCHIVE_OK)
        return out_error (u, name, err);
      if (h)
        {
          hash_zeros (h, (uint64_t)offset - pos);
          csr_sha256_update (h, buf, size);
        }
      pos = (uint64_t)offset + size;
    }
  if (sized && pos < want)
    {
      /* A hole at the end (sparse entry): finish_entry extends the file. */
      if (h)
        hash_zeros (h, want - pos);
      pos = want;
    }
  *size_out = pos;
  return 0;
}

/* copy_blocks, and the digest of the file when a manifest is wanted. */
static int
copy_data (struct unpack *u, const char *name, struct archive_entry *e,
           char hex[CSR_SHA256_HEX_LEN + 1], uint64_t *size_out, csr_error **err)
{
  if (u->m == NULL)
    return copy_blocks (u, name, e, NULL, size_out, err);
  struct csr_sha256 h;
  csr_sha256_init_fast (&h);
  int ret = copy_blocks (u, name, e, &h, size_out, err);
  char got[CSR_SHA256_HEX_LEN + 1];
  if (csr_sha256_final (&h, got) < 0 && ret == 0)
    ret = csr_error_set (err, 0, "entry '%s': sha256 failed", name);
  memcpy (hex, got, sizeof got);
  return ret;
}

/* ---------------------------------------------------------------- manifest */

/* Record (or update, for a path the archive names again) slot S's entry. */
static int
manifest_set (struct unpack *u, struct path_slot *s, char type, mode_t mode, uint64_t size,
              const char *data, const char *norm, csr_error **err)
{
  if (u->m == NULL)
    return 0;
  if (s->mi < 0)
    {
      ssize_t i = csr_manifest_add (u->m, type, mode, size, data, norm, err);
      if (i < 0)
        return -1;
      s->mi = i;
      return 0;
    }
  struct csr_manifest_entry *x = &u->m->entries[s->mi];
  char *copy = data ? strdup (data) : NULL;
  if (data && copy == NULL)
    return csr_error_errno (err, "manifest: cannot allocate");
  free (x->data);
  x->data = copy;
  x->type = type;
  x->mode = mode & 07777;
  x->size = size;
  return 0;
}

/* Parent directories of NORM that no entry named so far: libarchive creates
 * them (0755 with our umask); they get a slot and a manifest entry, and
 * become 0555 after the unpack when the tree is read-only. */
static int
add_implicit_parents (struct unpack *u, const char *norm, csr_error **err)
{
  for (const char *p = strchr (norm, '/'); p; p = strchr (p + 1, '/'))
    {
      size_t n = (size_t)(p - norm);
      if (map_find (&u->map, norm, n))
        continue;
      cleanup_free char *prefix = strndup (norm, n);
      if (prefix == NULL)
        return csr_error_errno (err, "entry '%s'", norm);
      struct path_slot *s = map_get (&u->map, prefix);
      if (s == NULL)
        return csr_error_errno (err, "entry '%s'", norm);
      s->kind = KIND_DIR;
      if (manifest_set (u, s, 'd', u->read_only ? 0555 : 0755, 0, NULL, prefix, err) < 0)
        return -1;
      if (u->n_implicit == u->cap_implicit)
        {
          size_t ncap = u->cap_implicit ? u->cap_implicit * 2 : 64;
          size_t *ni = realloc (u->implicit, ncap * sizeof *ni);
          if (ni == NULL)
            return csr_error_errno (err, "entry '%s'", norm);
          u->implicit = ni;
          u->cap_implicit = ncap;
        }
      if (s->mi >= 0)
        u->implicit[u->n_implicit++] = (size_t)s->mi;
    }
  return 0;
}

/* The permission bits entry E gets on disk. */
static mode_t
disk_perm (const struct unpack *u, mode_t mode, const struct path_slot *hardlink_src)
{
  if (hardlink_src && u->m && hardlink_src->mi >= 0)
    return u->m->entries[hardlink_src->mi].mode; /* one inode, one mode */
  mode_t perm = mode & 07777;
  if (!u->read_only || S_ISLNK (mode))
    return perm;
  if (S_ISDIR (mode))
    return 0555;
  return (perm & 0111) ? 0555 : 0444;
}

/* ---------------------------------------------------------------- writing */

/* Entry names: prefer the UTF-8 form (pax headers), else the raw bytes. */
static const char *
entry_name (const char *utf8, const char *raw)
{
  return utf8 ? utf8 : raw;
}

/* Write entry E (checked, renamed to NORM) and record it in the manifest. */
static int
write_entry (struct unpack *u, struct archive_entry *e, const char *name, const char *norm,
             struct path_slot *s, struct path_slot *src, csr_error **err)
{
  mode_t mode = la.archive_entry_mode (e);
  const char *symlink = la.archive_entry_symlink (e);
  mode_t perm = disk_perm (u, mode, src);
  if (!S_ISLNK (mode))
    la.archive_entry_set_perm (e, perm);
  int r = la.archive_write_header (u->out, e);
  if (r < ARCHIVE_WARN)
    return out_error (u, name, err);
  if (r == ARCHIVE_WARN)
    csr_debug ("entry '%s': %s", name, la.archive_error_string (u->out));
  char hex[CSR_SHA256_HEX_LEN + 1] = "";
  uint64_t size = 0;
  bool regular = src == NULL && S_ISREG (mode);
  if (regular)
    {
      if (copy_data (u, name, e, hex, &size, err) < 0)
        return -1;
    }
  else if (la.archive_read_data_skip (u->in) < ARCHIVE_WARN)
    return csr_error_set (err, 0, "archive '%s': entry '%s': %s", u->archive_path, name,
                          la.archive_error_string (u->in));
  r = la.archive_write_finish_entry (u->out);
  if (r < ARCHIVE_WARN)
    return out_error (u, name, err);
  if (r == ARCHIVE_WARN)
    csr_debug ("entry '%s': %s", name, la.archive_error_string (u->out));

  if (src)
    {
      if (u->m == NULL || src->mi < 0)
        return 0;
      struct csr_manifest_entry *x = &u->m->entries[src->mi];
      cleanup_free char *data = x->data ? strdup (x->data) : NULL;
      if (x->data && data == NULL)
        return csr_error_errno (err, "manifest: cannot allocate");
      return manifest_set (u, s, x->type, x->mode, x->size, data, norm, err);
    }
  if (regular)
    {
      if (u->m)
        u->m->bytes += size;
      return manifest_set (u, s, 'f', perm, size, hex, norm, err);
    }
  if (S_ISDIR (mode))
    return manifest_set (u, s, 'd', perm, 0, NULL, norm, err);
  if (S_ISLNK (mode))
    {
      if (symlink == NULL)
        return csr_error_set (err, 0, "entry '%s': symlink without a target", name);
      return manifest_set (u, s, 'l', 0777, strlen (symlink), symlink, norm, err);
    }
  return 0;
}

static int
unpack_entry (struct unpack *u, struct archive_entry *e, csr_error **err)
{
  const char *raw_name
      = entry_name (la.archive_entry_pathname_utf8 (e), la.archive_entry_pathname (e));
  const char *hardlink
      = la.archive_entry_hardlink (e)
            ? entry_name (la.archive_entry_hardlink_utf8 (e), la.archive_entry_hardlink (e))
            : NULL;
  const char *symlink
      = la.archive_entry_symlink (e)
            ? entry_name (la.archive_entry_symlink_utf8 (e), la.archive_entry_symlink (e))
            : NULL;
  mode_t mode = la.archive_entry_mode (e);
  if (raw_name == NULL)
    return csr_error_set (err, 0, "archive '%s': entry %zu has no usable name", u->archive_path,
                          u->entries);
  /* Copies: the entry's own strings change below when names are rewritten. */
  cleanup_free char *name = strdup (raw_name);
  cleanup_free char *link = NULL;
  if (name == NULL
      || ((hardlink || symlink) && (link = strdup (hardlink ? hardlink : symlink)) == NULL))
    return csr_error_errno (err, "archive '%s'", u->archive_path);
  if (hardlink)
    hardlink = link;
  else if (symlink)
    symlink = link;
  if (csr_tar_entry_check (name, mode, hardlink ? hardlink : symlink, hardlink != NULL, err) < 0)
    return -1;

  cleanup_free char *norm = normalize (name);
  cleanup_free char *norm_link = NULL;
  if (norm == NULL)
    return csr_error_errno (err, "entry '%s'", name);
  if (*norm == '\0')
    {
      /* "./": the top of the tree, which the caller created (0755). */
      la.archive_read_data_skip (u->in);
      return 0;
    }
  if (check_prefixes (u, name, norm, err) < 0)
    return -1;
  struct path_slot *src = NULL;
  if (hardlink)
    {
      norm_link = normalize (hardlink);
      if (norm_link == NULL)
        return csr_error_errno (err, "entry '%s'", name);
      if (check_prefixes (u, name, norm_link, err) < 0)
        return -1;
      src = map_find (&u->map, norm_link, strlen (norm_link));
      if (src == NULL || src->kind != KIND_REG)
        return csr_error_set (err, 0,
                              "entry '%s' is a hardlink to '%s', which is not an earlier regular "
                              "file of the archive",
                              name, hardlink);
      /* Data would be written through the link into the earlier file. */
      if (la.archive_entry_size_is_set (e) && la.archive_entry_size (e) > 0)
        return csr_error_set (err, 0, "entry '%s' is a hardlink with data (not supported)", name);
      la.archive_entry_copy_hardlink (e, norm_link);
    }
  if (symlink)
    la.archive_entry_copy_symlink (e, symlink);
  la.archive_entry_copy_pathname (e, norm);
  if (add_implicit_parents (u, norm, err) < 0)
    return -1;

  struct path_slot *s = map_get (&u->map, norm);
  if (s == NULL)
    return csr_error_errno (err, "entry '%s'", name);
  if (hardlink || S_ISREG (mode))
    s->kind = KIND_REG;
  else if (S_ISDIR (mode))
    s->kind = KIND_DIR;
  else if (S_ISLNK (mode))
    {
      s->kind = KIND_LNK;
      if (!s->was_symlink)
        u->symlinks++;
      s->was_symlink = true;
    }
  else
    s->kind = KIND_OTHER;
  /* map_get() may have grown the map: find the hardlink's source again. */
  if (hardlink)
    src = map_find (&u->map, norm_link, strlen (norm_link));
  if (hardlink && (src == NULL || src == s))
    return csr_error_set (err, 0, "entry '%s' is a hardlink to itself", name);
  return write_entry (u, e, name, norm, s, src, err);
}

static int
unpack_entries (struct unpack *u, csr_error **err)
{
  for (;;)
    {
      struct archive_entry *e;
      int r = la.archive_read_next_header (u->in, &e);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        return csr_error_set (err, 0, "archive '%s': %s", u->archive_path,
                              la.archive_error_string (u->in));
      u->entries++;
      if (unpack_entry (u, e, err) < 0)
        return -1;
    }
  if (u->entries == 0)
    return csr_error_set (err, 0, "archive '%s' has no entries", u->archive_path);
  return 0;
}

/* Read-only trees: the parent directories the archive lacks, and the top. */
static int
finish_read_only (struct unpack *u, int dfd, csr_error **err)
{
  for (size_t i = 0; u->m && i < u->n_implicit; i++)
    {
      const struct csr_manifest_entry *x = &u->m->entries[u->implicit[i]];
      if (x->type != 'd')
        continue;
      if (fchmodat (dfd, x->path, 0555, 0) < 0)
        return csr_error_errno (err, "unpack: chmod '%s'", x->path);
    }
  if (fchmod (dfd, 0555) < 0)
    return csr_error_errno (err, "unpack: chmod '%s'", u->dest);
  return 0;
}

int
csr_rootfs_unpack (const char *archive_path, const char *dest, csr_error **err)
{
  return csr_rootfs_unpack_ex (archive_path, dest, NULL, err);
}

int
csr_rootfs_unpack_ex (const char *archive_path, const char *dest, const struct csr_unpack_opts *o,
                      csr_error **err)
{
  cleanup_close int afd = open (archive_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (afd < 0)
    return csr_error_errno (err, "archive '%s'", archive_path);
  struct stat st;
  if (fstat (afd, &st) < 0)
    return csr_error_errno (err, "archive '%s'", archive_path);
  if (S_ISDIR (st.st_mode))
    return csr_error_set (err, EISDIR, "archive '%s'", archive_path);
  cleanup_close int dfd = open (dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return csr_error_errno (err, "unpack into '%s'", dest);
  cleanup_close int cwd = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cwd < 0)
    return csr_error_errno (err, "unpack: open the current directory");

  if (la_load (err) < 0)
    return -1;
  cleanup_la_read struct archive *in = la.archive_read_new ();
  cleanup_la_write struct archive *out = la.archive_write_disk_new ();
  if (in == NULL || out == NULL)
    return csr_error_set (err, ENOMEM, "archive '%s': cannot allocate libarchive objects",
                          archive_path);
  add_read_formats (in);
  if (la.archive_read_open_fd (in, afd, UNPACK_BLOCK_SIZE) != ARCHIVE_OK)
    return csr_error_set (err, 0, "archive '%s': %s", archive_path, la.archive_error_string (in));
  /* No ARCHIVE_EXTRACT_OWNER: the files belong to the invoking user. */
  la.archive_write_disk_set_options (out, ARCHIVE_EXTRACT_SECURE_SYMLINKS
                                              | ARCHIVE_EXTRACT_SECURE_NODOTDOT
                                              | ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS
                                              | ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME);

  struct unpack u = {
    .archive_path = archive_path,
    .dest = dest,
    .in = in,
    .out = out,
    .read_only = o && o->read_only,
    .m = o ? o->manifest : NULL,
  };
  /* The top of the tree comes first; its mode is known at the end. */
  if (u.m && csr_manifest_add (u.m, 'd', 0, 0, NULL, ".", err) < 0)
    return -1;

  /* Entry names are written relative to DEST, so that libarchive's own
   * checks (no absolute path, no symlink on the way) apply within the tree
   * only, whatever the path of DEST.  This changes the current directory of
   * the process while it runs (libarchive's deferred directory fixups use the
   * relative names too); it is restored before returning. */
  if (fchdir (dfd) < 0)
    return csr_error_errno (err, "unpack into '%s'", dest);
  /* Parent directories missing from the archive are created with 0777 minus
   * the umask: make them 0755 whatever the caller's umask (the tree must be
   * readable by the jail's uid).  Entries get their archive modes. */
  mode_t old_umask = umask (022);
  int ret = unpack_entries (&u, err);
  /* Applies the deferred directory modes and times (relative names too). */
  int r = la.archive_write_close (out);
  if (ret == 0 && r < ARCHIVE_WARN)
    {
      int e = out_errno (out);
      if (e == ENOSPC || e == EDQUOT)
        u.nospace = strdup ("the directories' modes");
      ret = csr_error_set (err, e, "unpack into '%s': %s", dest, la.archive_error_string (out));
    }
  umask (old_umask);
  if (fchdir (cwd) < 0 && ret == 0)
    ret = csr_error_errno (err, "unpack: return to the current directory");
  if (ret < 0 && u.nospace)
    {
      csr_error_freep (err);
      ret = csr_rootfs_nospace (dest, u.nospace, archive_bytes (archive_path), err);
    }
  free (u.nospace);
  if (ret == 0 && u.read_only)
    ret = finish_read_only (&u, dfd, err);
  if (ret == 0 && u.m)
    {
      struct stat top;
      if (fstat (dfd, &top) < 0)
        ret = csr_error_errno (err, "unpack into '%s'", dest);
      else
        u.m->entries[0].mode = top.st_mode & 07777;
    }
  map_free (&u.map);
  free (u.implicit);
  return ret;
}
