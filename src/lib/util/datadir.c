/* csrun — where csrun's data files are (see datadir.h). */
#include "config.h"
#include "datadir.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROOTFS_NAME "python-rootfs.tar.zst"

/* A data file: next to the binary (build tree: NAME is relative to the
 * binary's directory), in ../share/csrun beside the binary (a relocated
 * install), or under the configured $(pkgdatadir). */
static char *
find_data (const char *name)
{
  char exe[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0)
    {
      exe[n] = '\0';
      const char *dir = dirname (exe);
      static const char *const rel[] = { "/", "/../share/csrun/" };
      for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++)
        {
          char *p = NULL;
          if (asprintf (&p, "%s%s%s", dir, rel[i], name) < 0)
            continue;
          if (access (p, R_OK) == 0)
            return p;
          free (p);
        }
    }
  char *p = NULL;
  if (asprintf (&p, "%s/%s", PKGDATADIR, name) < 0)
    return NULL;
  return p;
}

int
csr_pick_dir (const struct csr_dir_place *places, char **dir)
{
  *dir = NULL;
  for (const struct csr_dir_place *p = places; p->var || p->suffix; p++)
    {
      const char *v = p->var ? getenv (p->var) : NULL;
      int r;
      if (p->var == NULL && geteuid () == 0)
        r = asprintf (dir, "%s", p->suffix);
      else if (p->suffix == NULL && v && *v)
        r = asprintf (dir, "%s", v);
      else if (p->var && p->suffix && v && *v == '/')
        r = asprintf (dir, "%s%s", v, p->suffix);
      else
        continue;
      if (r < 0)
        {
          *dir = NULL;
          return -1;
        }
      return 0;
    }
  return 1;
}

char *
csr_find_rootfs (void)
{
  const char *env = getenv ("CSRUN_ROOTFS");
  if (env && *env)
    return strdup (env);
  return find_data (ROOTFS_NAME);
}

char *
csr_find_policy (const char *name)
{
  const char *env = getenv ("CSRUN_POLICY_DIR");
  char *p = NULL;
  if (env && *env)
    {
      if (asprintf (&p, "%s/%s", env, name) < 0)
        return NULL;
      return p;
    }
  if (asprintf (&p, "policies/%s", name) < 0)
    return NULL;
  char *found = find_data (p);
  free (p);
  return found;
}
