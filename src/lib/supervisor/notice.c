#include "config.h"
#include "notice.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/trust.h"

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"

bool
csr_notice_boot_id (const char *text, size_t len, char out[37])
{
  if (text == NULL)
    return false;
  if (len > 0 && text[len - 1] == '\n')
    len--;
  if (len != 36)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char c = text[i];
      bool dash = i == 8 || i == 13 || i == 18 || i == 23;
      if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
        return false;
    }
  memcpy (out, text, 36);
  out[36] = '\0';
  return true;
}

/* Remove DIRFD's entries "PREFIX*" but KEEP (earlier boots' markers). */
static void
remove_old (int dirfd, const char *prefix, const char *keep)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return;
    }
  size_t n = strlen (prefix);
  struct dirent *e;
  while ((e = readdir (d)) != NULL)
    if (strncmp (e->d_name, prefix, n) == 0 && strcmp (e->d_name, keep) != 0 && e->d_type != DT_DIR)
      (void)unlinkat (dirfd, e->d_name, 0); /* best effort: a leftover only costs a name */
  closedir (d);
}

int
csr_notice_first (const char *cache_dir, const char *name, csr_error **err)
{
  if (cache_dir == NULL)
    return csr_error_set (err, 0, "no cache directory");
  cleanup_free char *text = NULL;
  size_t len = 0;
  char boot[37];
  if (csr_read_file (BOOT_ID_PATH, 256, &text, &len, err) < 0)
    return -1;
  if (!csr_notice_boot_id (text, len, boot))
    return csr_error_set (err, 0, "%s: not a boot id", BOOT_ID_PATH);
  cleanup_close int dfd = csr_trust_open_dir ("cache directory", cache_dir, 0, NULL, err);
  if (dfd < 0)
    return -1;
  char marker[256], prefix[200];
  snprintf (prefix, sizeof prefix, "%s.", name);
  snprintf (marker, sizeof marker, "%s%s", prefix, boot);
  int fd = openat (dfd, marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0)
    {
      if (close (fd) < 0)
        return csr_error_errno (err, "close %s/%s", cache_dir, marker);
      remove_old (dfd, prefix, marker);
      return 1;
    }
  if (errno != EEXIST)
    return csr_error_errno (err, "create %s/%s", cache_dir, marker);
  /* Only our own regular file counts (a symlink or a foreign file: say it). */
  struct stat st;
  if (fstatat (dfd, marker, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return csr_error_errno (err, "stat %s/%s", cache_dir, marker);
  char path[4096];
  snprintf (path, sizeof path, "%s/%s", cache_dir, marker);
  if (csr_trust_check_entry (&st, true, path, err) < 0)
    return -1;
  return 0;
}
