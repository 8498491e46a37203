#include "config.h"
#include "filearg.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JAIL_PATH_MAX 1024

bool
csr_jail_path_ok (const char *p)
{
  size_t len = strlen (p);
  if (len < 2 || len > JAIL_PATH_MAX || p[0] != '/' || p[len - 1] == '/')
    return false;
  for (const char *c = p + 1; *c;)
    {
      const char *end = strchr (c, '/');
      size_t n = end ? (size_t)(end - c) : strlen (c);
      if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
        return false;
      c += n + (end ? 1 : 0);
    }
  return true;
}

bool
csr_path_under (const char *p, const char *root)
{
  size_t n = strlen (root);
  return strncmp (p, root, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static bool
strictly_under (const char *p, const char *root)
{
  return csr_path_under (p, root) && p[strlen (root)] == '/';
}

int
csr_in_arg_parse (const char *arg, struct csr_in_arg *in, csr_error **err)
{
  memset (in, 0, sizeof *in);
  const char *colon = strrchr (arg, ':');
  /* DEST is absolute: a colon that is not followed by '/' is part of PATH. */
  if (colon && colon[1] != '/')
    colon = NULL;
  size_t slen = colon ? (size_t)(colon - arg) : strlen (arg);
  if (slen == 0)
    return csr_error_set (err, EINVAL, "--in '%s': no host path", arg);
  in->src = strndup (arg, slen);
  if (in->src == NULL)
    return csr_error_set (err, ENOMEM, "--in: copy the path");
  if (colon)
    in->dest = strdup (colon + 1);
  else
    {
      /* The last component of PATH (trailing slashes ignored). */
      size_t end = slen;
      while (end > 1 && in->src[end - 1] == '/')
        end--;
      size_t start = end;
      while (start > 0 && in->src[start - 1] != '/')
        start--;
      if (end == start || (end - start == 1 && in->src[start] == '.')
          || (end - start == 2 && in->src[start] == '.' && in->src[start + 1] == '.'))
        {
          csr_in_arg_release (in);
          return csr_error_set (err, EINVAL,
                                "--in '%s': no file name to copy it under: give PATH:DEST", arg);
        }
      if (asprintf (&in->dest, "/work/%.*s", (int)(end - start), in->src + start) < 0)
        in->dest = NULL;
    }
  if (in->dest == NULL)
    {
      csr_in_arg_release (in);
      return csr_error_set (err, ENOMEM, "--in: copy the destination");
    }
  if (!csr_jail_path_ok (in->dest)
      || !(strictly_under (in->dest, "/work") || strictly_under (in->dest, "/tmp")))
    {
      csr_error_set (err, EINVAL,
                     "--in '%s': DEST must be an absolute path below /work or /tmp, "
                     "without '.' or '..' components",
                     arg);
      csr_in_arg_release (in);
      return -1;
    }
  if (strcmp (in->dest, "/work/snippet.py") == 0)
    {
      csr_in_arg_release (in);
      return csr_error_set (err, EINVAL, "--in '%s': /work/snippet.py is the snippet itself", arg);
    }
  return 0;
}

int
csr_mount_arg_parse (const char *arg, struct csr_mount_arg *m, csr_error **err)
{
  memset (m, 0, sizeof *m);
  const char *c1 = strchr (arg, ':');
  if (c1 == NULL || c1 == arg)
    return csr_error_set (err, EINVAL, "--mount '%s': expected SRC:DST[:ro|rw]", arg);
  const char *dst = c1 + 1;
  const char *c2 = strchr (dst, ':');
  size_t dlen = c2 ? (size_t)(c2 - dst) : strlen (dst);
  if (c2)
    {
      if (strcmp (c2 + 1, "rw") == 0)
        m->rw = true;
      else if (strcmp (c2 + 1, "ro") != 0)
        return csr_error_set (err, EINVAL, "--mount '%s': the mode is ro or rw, not '%s'", arg,
                              c2 + 1);
    }
  m->src = strndup (arg, (size_t)(c1 - arg));
  m->dst = strndup (dst, dlen);
  if (m->src == NULL || m->dst == NULL)
    {
      csr_mount_arg_release (m);
      return csr_error_set (err, ENOMEM, "--mount: copy the paths");
    }
  if (!csr_jail_path_ok (m->dst)
      || !(strictly_under (m->dst, "/work") || csr_path_under (m->dst, "/data")
           || csr_path_under (m->dst, "/mnt")))
    {
      csr_error_set (err, EINVAL,
                     "--mount '%s': DST must be /data, /mnt or a path below them or below "
                     "/work (absolute, without '.' or '..' components)",
                     arg);
      csr_mount_arg_release (m);
      return -1;
    }
  if (strcmp (m->dst, "/work/snippet.py") == 0)
    {
      csr_mount_arg_release (m);
      return csr_error_set (err, EINVAL, "--mount '%s': /work/snippet.py is the snippet itself",
                            arg);
    }
  return 0;
}

int
csr_files_args_check (const struct csr_in_arg *in, size_t n_in, const struct csr_mount_arg *m,
                      size_t n_m, csr_error **err)
{
  for (size_t i = 0; i < n_in; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp (in[i].dest, in[k].dest) == 0)
        return csr_error_set (err, EINVAL, "--in %s and --in %s both go to %s", in[k].src,
                              in[i].src, in[i].dest);
  for (size_t j = 0; j < n_m; j++)
    {
      for (size_t i = 0; i < n_in; i++)
        if (csr_path_under (in[i].dest, m[j].dst) || csr_path_under (m[j].dst, in[i].dest))
          return csr_error_set (err, EINVAL,
                                "--in %s goes to %s, which overlaps --mount %s at %s: it would "
                                "write into the host directory",
                                in[i].src, in[i].dest, m[j].src, m[j].dst);
      for (size_t k = 0; k < j; k++)
        if (csr_path_under (m[j].dst, m[k].dst) || csr_path_under (m[k].dst, m[j].dst))
          return csr_error_set (err, EINVAL, "--mount %s and --mount %s overlap", m[k].dst,
                                m[j].dst);
    }
  return 0;
}

bool
csr_out_glob_match (const char *rel, const char *const *globs, size_t n_globs)
{
  if (n_globs == 0)
    return true;
  char buf[4096];
  size_t len = strlen (rel);
  if (len >= sizeof buf)
    return false;
  memcpy (buf, rel, len + 1);
  for (;;)
    {
      for (size_t i = 0; i < n_globs; i++)
        if (fnmatch (globs[i], buf, FNM_PATHNAME) == 0)
          return true;
      char *slash = strrchr (buf, '/');
      if (slash == NULL)
        return false;
      *slash = '\0';
    }
}

void
csr_in_arg_release (struct csr_in_arg *in)
{
  free (in->src);
  free (in->dest);
  in->src = in->dest = NULL;
}

void
csr_mount_arg_release (struct csr_mount_arg *m)
{
  free (m->src);
  free (m->dst);
  m->src = m->dst = NULL;
}
