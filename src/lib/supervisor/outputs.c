/* csrun — --out: the final attempt's /work, packed by the jail's init
 * (jail/files.c), delivered to DIR on the host by the supervisor, as the
 * invoking user.  The pack is read as hostile: every path is checked, every
 * directory below DIR is opened without following a symlink (openat2
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), a file is written under a
 * temporary name and renamed over its final name only when complete, no
 * device, link or set-id bit is ever made. */
#include "config.h"
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/digest.h"
#include "../util/fs.h"
#include "../util/pack.h"

int
csr_files_report_skip (struct csr_files_report *rep, const char *path, const char *reason)
{
  if (rep->n_skipped == rep->cap_skipped)
    {
      size_t cap = rep->cap_skipped ? rep->cap_skipped * 2 : 16;
      struct csr_output_skip *s = realloc (rep->skipped, cap * sizeof *s);
      if (s == NULL)
        return -1;
      rep->skipped = s;
      rep->cap_skipped = cap;
    }
  struct csr_output_skip *s = &rep->skipped[rep->n_skipped];
  s->path = strdup (path);
  s->reason = strdup (reason);
  if (s->path == NULL || s->reason == NULL)
    {
      free (s->path);
      free (s->reason);
      return -1;
    }
  rep->n_skipped++;
  return 0;
}

static int
add_output (struct csr_files_report *rep, const char *path, uint64_t size, const char *sha)
{
  if (rep->n_outputs == rep->cap_outputs)
    {
      size_t cap = rep->cap_outputs ? rep->cap_outputs * 2 : 16;
      struct csr_output_file *o = realloc (rep->outputs, cap * sizeof *o);
      if (o == NULL)
        return -1;
      rep->outputs = o;
      rep->cap_outputs = cap;
    }
  struct csr_output_file *o = &rep->outputs[rep->n_outputs];
  o->path = strdup (path);
  if (o->path == NULL)
    return -1;
  o->size = size;
  snprintf (o->sha256, sizeof o->sha256, "%s", sha);
  rep->n_outputs++;
  rep->out_bytes += size;
  return 0;
}

/* Write a REG entry's SIZE bytes from IN to PFD/LEAF: a temporary file,
 * then renamed over LEAF (an existing regular file is replaced; anything
 * else there is left and the file skipped).  1: delivered, 0: skipped
 * (REASON set), -1: DIR can't be written. */
static int
deliver_file (int in, int pfd, const char *leaf, const struct csr_pack_entry *e, char sha[65],
              const char **reason, csr_error **err)
{
  struct stat st;
  if (fstatat (pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG (st.st_mode))
    {
      *reason = "exists in DIR and is not a regular file: left as it is";
      return csr_pack_skip_data (in, e->size, err) < 0 ? -1 : 0;
    }
  char tmp[CSR_TMP_NAME_MAX];
  int fd = csr_tmp_create_at (pfd, (mode_t)(e->mode & 0777), tmp, err);
  if (fd < 0)
    return csr_error_wrap (err, "--out: %s", e->path);
  struct csr_sha256 h;
  csr_sha256_init (&h);
  if (csr_pack_copy (fd, in, e->size, &h, err) < 0)
    {
      close (fd);
      unlinkat (pfd, tmp, 0);
      return csr_error_wrap (err, "--out: write %s", e->path);
    }
  if (csr_tmp_commit_at (pfd, tmp, fd, leaf, err) < 0)
    return csr_error_wrap (err, "--out: write %s", e->path);
  if (csr_sha256_final (&h, sha) < 0)
    return csr_error_set (err, EIO, "sha256");
  return 1;
}

/* Record a skipped path; -1 with *ERR only when out of memory. */
static int
skip (struct csr_files_report *rep, const char *path, const char *reason, csr_error **err)
{
  if (csr_files_report_skip (rep, path, reason) < 0)
    return csr_error_set (err, ENOMEM, "record a skipped output");
  return 0;
}

static int
deliver_entry (int in, int dirfd, const struct csr_pack_entry *e, uint64_t max,
               struct csr_files_report *rep, csr_error **err)
{
  if (e->type == CSR_PACK_SKIP)
    {
      char why[128];
      if (e->reason == CSR_SKIP_OVER_CAP)
        snprintf (why, sizeof why, "%s (%llu bytes)", csr_pack_reason_text (e->reason),
                  (unsigned long long)e->size);
      else
        snprintf (why, sizeof why, "%s", csr_pack_reason_text (e->reason));
      return skip (rep, e->path, why, err);
    }
  if (e->type == CSR_PACK_LNK)
    return skip (rep, e->path, csr_pack_reason_text (CSR_SKIP_SYMLINK), err);
  if (e->type == CSR_PACK_REG && rep->out_bytes + e->size > max)
    {
      char why[128];
      snprintf (why, sizeof why, "%s (%llu bytes)", csr_pack_reason_text (CSR_SKIP_OVER_CAP),
                (unsigned long long)e->size);
      if (skip (rep, e->path, why, err) < 0)
        return -1;
      return csr_pack_skip_data (in, e->size, err);
    }
  const char *leaf;
  csr_error *why = NULL;
  cleanup_close int pfd = csr_beneath_parent (dirfd, e->path, true, 0777, &leaf, &why);
  if (pfd < 0)
    {
      /* A symlink or a file in the way below DIR (there before the run). */
      char r[512];
      snprintf (r, sizeof r, "can't be written below DIR: %s", csr_error_text (why));
      csr_error_free (why);
      if (skip (rep, e->path, r, err) < 0)
        return -1;
      return e->type == CSR_PACK_REG ? csr_pack_skip_data (in, e->size, err) : 0;
    }
  if (e->type == CSR_PACK_DIR)
    {
      if (mkdirat (pfd, leaf, (mode_t)((e->mode & 0777) | 0700)) < 0 && errno != EEXIST)
        return csr_error_errno (err, "--out: mkdir %s", e->path);
      return 0;
    }
  char sha[65] = "";
  const char *reason = NULL;
  int rc = deliver_file (in, pfd, leaf, e, sha, &reason, err);
  if (rc < 0)
    return -1;
  if (rc == 0)
    return skip (rep, e->path, reason, err);
  if (add_output (rep, e->path, e->size, sha) < 0)
    return csr_error_set (err, ENOMEM, "report");
  return 0;
}

int
csr_outputs_deliver (int in, const char *dir, uint64_t max, struct csr_files_report *rep,
                     csr_error **err)
{
  rep->out_dir = dir;
  if (lseek (in, 0, SEEK_SET) < 0)
    return csr_error_errno (err, "rewind the outputs' pack");
  if (mkdir (dir, 0777) < 0 && errno != EEXIST)
    return csr_error_errno (err, "--out: mkdir %s", dir);
  cleanup_close int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    return csr_error_errno (err, "--out: open %s", dir);
  struct csr_pack_entry *e = malloc (sizeof *e);
  if (e == NULL)
    return csr_error_set (err, ENOMEM, "allocate");
  int rc;
  csr_error *perr = NULL;
  while ((rc = csr_pack_get (in, e, &perr)) > 0)
    if (deliver_entry (in, dirfd, e, max, rep, err) < 0)
      {
        rc = -2;
        break;
      }
  free (e);
  if (rc == -1)
    {
      /* The jail's init could not finish the pack (killed at the timeout,
       * out of memory): what came before was delivered. */
      csr_files_report_skip (rep, "*",
                             "the jail did not finish packing /work (killed?): "
                             "the files after the ones listed were not delivered");
      csr_error_free (perr);
    }
  if (rc == -2)
    return -1;
  if (fsync (dirfd) < 0 && errno != EINVAL)
    return csr_error_errno (err, "--out: sync %s", dir);
  return 0;
}

void
csr_files_report_release (struct csr_files_report *rep)
{
  for (size_t i = 0; i < rep->n_inputs; i++)
    {
      free (rep->inputs[i].path);
      free (rep->inputs[i].dest);
    }
  free (rep->inputs);
  for (size_t i = 0; i < rep->n_outputs; i++)
    free (rep->outputs[i].path);
  free (rep->outputs);
  for (size_t i = 0; i < rep->n_skipped; i++)
    {
      free (rep->skipped[i].path);
      free (rep->skipped[i].reason);
    }
  free (rep->skipped);
  memset (rep, 0, sizeof *rep);
}
