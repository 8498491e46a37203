/* csrun — the policy for one archive entry, applied before anything is written. */
#include "config.h"
#include "rootfs.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../util/path.h"

/* Room for a printable rendering of an entry name in a message. */
#define SHOWN_MAX 256

/* Render NAME for a one-line message: control characters become \ooo and very
 * long names are cut (with "...").  Archive names are attacker-controlled. */
static const char *
shown (const char *name, char buf[SHOWN_MAX])
{
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)name; *p; p++)
    {
      if (o + 8 >= SHOWN_MAX)
        {
          memcpy (buf + o, "...", 4);
          return buf;
        }
      if (*p < 0x20 || *p == 0x7f || *p == '\\')
        o += (size_t)snprintf (buf + o, SHOWN_MAX - o, "\\%03o", *p);
      else
        buf[o++] = (char)*p;
    }
  buf[o] = '\0';
  return buf;
}

static bool
has_control_char (const char *s)
{
  for (const unsigned char *p = (const unsigned char *)s; *p; p++)
    if (*p < 0x20 || *p == 0x7f)
      return true;
  return false;
}

/* Does PATH have a ".." component?  Sets *EMPTY when it has no component
 * other than "." (like "./" or "."), i.e. it names the top of the tree. */
static bool
has_dotdot (const char *path, bool *empty)
{
  *empty = true;
  const char *p = path, *c;
  size_t n;
  while ((c = csr_path_next (&p, &n)) != NULL)
    {
      if (csr_path_is_dotdot (c, n))
        return true;
      if (!csr_path_is_dot (c, n))
        *empty = false;
    }
  return false;
}

int
csr_tar_entry_check (const char *path, mode_t mode, const char *linktarget, bool is_hardlink,
                     csr_error **err)
{
  char a[SHOWN_MAX], b[SHOWN_MAX];
  bool top;

  if (path == NULL || *path == '\0')
    return csr_error_set (err, 0, "archive entry with an empty name");
  if (has_control_char (path))
    return csr_error_set (err, 0, "entry '%s' has a control character in its name",
                          shown (path, a));
  if (path[0] == '/')
    return csr_error_set (err, 0, "entry '%s' has an absolute path", shown (path, a));
  if (has_dotdot (path, &top))
    return csr_error_set (err, 0, "entry '%s' has a '..' component", shown (path, a));

  if (is_hardlink)
    {
      if (linktarget == NULL || *linktarget == '\0')
        return csr_error_set (err, 0, "entry '%s' is a hardlink without a source", shown (path, a));
      if (has_control_char (linktarget))
        return csr_error_set (err, 0, "entry '%s' is a hardlink to a name with a control character",
                              shown (path, a));
      if (linktarget[0] == '/')
        return csr_error_set (err, 0, "entry '%s' is a hardlink to absolute path '%s'",
                              shown (path, a), shown (linktarget, b));
      bool src_top;
      if (has_dotdot (linktarget, &src_top))
        return csr_error_set (err, 0,
                              "entry '%s' is a hardlink to '%s', which has a '..' component",
                              shown (path, a), shown (linktarget, b));
      if (top || src_top)
        return csr_error_set (err, 0, "entry '%s' is a hardlink to '%s': not a regular file",
                              shown (path, a), shown (linktarget, b));
    }

  /* A hardlink entry carries the type of its source, or none at all. */
  mode_t type = mode & S_IFMT;
  if (S_ISCHR (mode))
    return csr_error_set (err, 0, "entry '%s' is a character device", shown (path, a));
  if (S_ISBLK (mode))
    return csr_error_set (err, 0, "entry '%s' is a block device", shown (path, a));
  if (S_ISFIFO (mode))
    return csr_error_set (err, 0, "entry '%s' is a FIFO", shown (path, a));
  if (S_ISSOCK (mode))
    return csr_error_set (err, 0, "entry '%s' is a socket", shown (path, a));
  if (mode & S_ISUID)
    return csr_error_set (err, 0, "entry '%s' has the setuid bit", shown (path, a));
  if (mode & S_ISGID)
    return csr_error_set (err, 0, "entry '%s' has the setgid bit", shown (path, a));

  if (is_hardlink)
    {
      if (type != 0 && !S_ISREG (mode))
        return csr_error_set (err, 0, "entry '%s' is a hardlink of an unsupported type (0%o)",
                              shown (path, a), (unsigned)type);
      return 0;
    }
  if (S_ISLNK (mode))
    {
      /* Absolute targets and ".." are fine: the jail resolves them inside the
       * tree, and unpacking never writes through a symlink. */
      if (linktarget == NULL || *linktarget == '\0')
        return csr_error_set (err, 0, "entry '%s' is a symlink without a target", shown (path, a));
      if (has_control_char (linktarget))
        return csr_error_set (err, 0, "entry '%s' is a symlink to a name with a control character",
                              shown (path, a));
      if (top)
        return csr_error_set (err, 0, "entry '%s' replaces the top of the tree with a symlink",
                              shown (path, a));
      return 0;
    }
  if (S_ISDIR (mode))
    return 0;
  if (S_ISREG (mode))
    {
      if (top)
        return csr_error_set (err, 0, "entry '%s' replaces the top of the tree with a file",
                              shown (path, a));
      return 0;
    }
  return csr_error_set (err, 0, "entry '%s' has an unsupported file type (0%o)", shown (path, a),
                        (unsigned)type);
}
