#include "config.h"
#include "idmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"

void
csr_idmap_default (struct jail_spec *spec, uid_t euid, gid_t egid)
{
  bool root = euid == 0;
  if (spec->n_uid_map == 0)
    {
      spec->uid_map[0] = (struct csr_idmap){ 0, root ? CSR_ROOT_MAPPED_ID : euid, 1 };
      spec->n_uid_map = 1;
    }
  if (spec->n_gid_map == 0)
    {
      spec->gid_map[0] = (struct csr_idmap){ 0, root ? CSR_ROOT_MAPPED_ID : egid, 1 };
      spec->n_gid_map = 1;
    }
}

int
csr_idmap_find_subid (const char *text, const char *user, uid_t uid, uint32_t *start,
                      uint32_t *count, csr_error **err)
{
  char uidstr[32];
  snprintf (uidstr, sizeof uidstr, "%u", (unsigned)uid);
  int lineno = 0;
  for (const char *line = text; line && *line;
       line = strchr (line, '\n') ? strchr (line, '\n') + 1 : NULL)
    {
      lineno++;
      const char *end = strchrnul (line, '\n');
      if (line == end || line[0] == '#')
        continue;
      const char *c1 = memchr (line, ':', (size_t)(end - line));
      const char *c2 = c1 ? memchr (c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
      if (c1 == NULL || c2 == NULL)
        return csr_error_set (err, 0, "line %d: expected NAME:START:COUNT", lineno);
      size_t nlen = (size_t)(c1 - line);
      bool match = (user && strlen (user) == nlen && memcmp (line, user, nlen) == 0)
                   || (strlen (uidstr) == nlen && memcmp (line, uidstr, nlen) == 0);
      if (!match)
        continue;
      char *e1, *e2;
      errno = 0;
      unsigned long long s = strtoull (c1 + 1, &e1, 10);
      unsigned long long n = strtoull (c2 + 1, &e2, 10);
      if (errno || e1 != c2 || (e2 != end && *e2 != '\r') || n == 0 || s > UINT32_MAX
          || n > UINT32_MAX || s + n - 1 > UINT32_MAX)
        return csr_error_set (err, 0, "line %d: invalid subordinate range", lineno);
      *start = (uint32_t)s;
      *count = (uint32_t)n;
      return 1;
    }
  return 0;
}

int
csr_idmap_subordinate (struct jail_snippet *sn, const char *user, uid_t euid, gid_t egid,
                       const char *subuid_text, const char *subgid_text, uid_t uid, gid_t gid,
                       csr_error **err)
{
  struct
  {
    const char *file, *text;
    uint32_t want, start, count;
    struct csr_idmap *map;
    size_t *n;
    uint32_t outside0;
  } k[2] = {
    { "/etc/subuid", subuid_text, uid, 0, 0, sn->jail.uid_map, &sn->jail.n_uid_map,
      euid == 0 ? CSR_ROOT_MAPPED_ID : euid },
    { "/etc/subgid", subgid_text, gid, 0, 0, sn->jail.gid_map, &sn->jail.n_gid_map,
      euid == 0 ? CSR_ROOT_MAPPED_ID : egid },
  };
  for (int i = 0; i < 2; i++)
    {
      int found = csr_idmap_find_subid (k[i].text ? k[i].text : "", user, euid, &k[i].start,
                                        &k[i].count, err);
      if (found < 0)
        return csr_error_wrap (err, "%s", k[i].file);
      if (found == 0)
        return csr_error_set (err, 0,
                              "--user needs a subordinate id range for '%s' in %s (see subuid(5))",
                              user ? user : "?", k[i].file);
      if (k[i].want == 0 || k[i].want > k[i].count || k[i].want > 65535)
        return csr_error_set (err, 0, "--user id %u is outside the subordinate range of %s (1..%u)",
                              (unsigned)k[i].want, k[i].file,
                              (unsigned)(k[i].count < 65535 ? k[i].count : 65535));
      uint32_t n = k[i].count < 65535 ? k[i].count : 65535;
      k[i].map[0] = (struct csr_idmap){ 0, k[i].outside0, 1 };
      k[i].map[1] = (struct csr_idmap){ 1, k[i].start, n };
      *k[i].n = 2;
    }
  sn->jail.use_newidmap = euid != 0;
  sn->uid = uid;
  sn->gid = gid;
  return 0;
}

int
csr_idmap_format (const struct csr_idmap *maps, size_t n, char *buf, size_t bufsz)
{
  size_t off = 0;
  if (bufsz == 0)
    return -1;
  buf[0] = '\0';
  for (size_t i = 0; i < n; i++)
    {
      int w = snprintf (buf + off, bufsz - off, "%" PRIu32 " %" PRIu32 " %" PRIu32 "\n",
                        maps[i].inside, maps[i].outside, maps[i].count);
      if (w < 0 || (size_t)w >= bufsz - off)
        return -1;
      off += (size_t)w;
    }
  return (int)off;
}

static bool
overlap (uint32_t a, uint32_t alen, uint32_t b, uint32_t blen)
{
  return (uint64_t)a < (uint64_t)b + blen && (uint64_t)b < (uint64_t)a + alen;
}

int
csr_idmap_validate (const struct csr_idmap *maps, size_t n, csr_error **err)
{
  if (n == 0)
    return csr_error_set (err, EINVAL, "empty id map");
  if (n > CSR_MAX_IDMAPS)
    return csr_error_set (err, EINVAL, "too many id map lines (%zu, at most %d)", n,
                          CSR_MAX_IDMAPS);
  for (size_t i = 0; i < n; i++)
    {
      if (maps[i].count == 0)
        return csr_error_set (err, EINVAL, "id map line %zu has count 0", i + 1);
      if ((uint64_t)maps[i].inside + maps[i].count > (uint64_t)UINT32_MAX + 1
          || (uint64_t)maps[i].outside + maps[i].count > (uint64_t)UINT32_MAX + 1)
        return csr_error_set (err, EINVAL, "id map line %zu overflows 32 bits", i + 1);
      for (size_t j = 0; j < i; j++)
        {
          if (overlap (maps[i].inside, maps[i].count, maps[j].inside, maps[j].count))
            return csr_error_set (err, EINVAL, "id map lines %zu and %zu overlap inside", j + 1,
                                  i + 1);
          if (overlap (maps[i].outside, maps[i].count, maps[j].outside, maps[j].count))
            return csr_error_set (err, EINVAL, "id map lines %zu and %zu overlap outside", j + 1,
                                  i + 1);
        }
    }
  return 0;
}

static int
write_proc_file (pid_t pid, const char *name, const char *text, csr_error **err)
{
  char path[64];
  snprintf (path, sizeof path, "/proc/%d/%s", (int)pid, name);
  cleanup_close int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "open %s", path);
  ssize_t w = write (fd, text, strlen (text));
  if (w < 0 || (size_t)w != strlen (text))
    return csr_error_errno (err, "write %s", path);
  return 0;
}

static int
run_helper (const char *prog, pid_t pid, const struct csr_idmap *maps, size_t n, csr_error **err)
{
  char *argv[3 + 3 * CSR_MAX_IDMAPS + 1];
  char nums[3 * CSR_MAX_IDMAPS + 1][16];
  size_t a = 0;
  argv[a++] = (char *)prog;
  snprintf (nums[0], sizeof nums[0], "%d", (int)pid);
  argv[a++] = nums[0];
  for (size_t i = 0; i < n; i++)
    {
      snprintf (nums[1 + 3 * i], 16, "%" PRIu32, maps[i].inside);
      snprintf (nums[2 + 3 * i], 16, "%" PRIu32, maps[i].outside);
      snprintf (nums[3 + 3 * i], 16, "%" PRIu32, maps[i].count);
      argv[a++] = nums[1 + 3 * i];
      argv[a++] = nums[2 + 3 * i];
      argv[a++] = nums[3 + 3 * i];
    }
  argv[a] = NULL;
  char *envp[] = { (char *)"PATH=/usr/bin:/bin:/usr/sbin:/sbin", NULL };
  pid_t child;
  int rc = posix_spawnp (&child, prog, NULL, NULL, argv, envp);
  if (rc != 0)
    return csr_error_set (err, rc, "cannot run %s (install the Debian package uidmap)", prog);
  int status;
  while (waitpid (child, &status, 0) < 0)
    if (errno != EINTR)
      return csr_error_errno (err, "waitpid %s", prog);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return csr_error_set (err, 0, "%s failed (status %d): check /etc/sub%cid", prog,
                          WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status),
                          prog[3] == 'u' ? 'u' : 'g');
  return 0;
}

int
csr_idmap_write (pid_t pid, const struct jail_spec *spec, csr_error **err)
{
  char buf[CSR_MAX_IDMAPS * 40];
  if (csr_idmap_validate (spec->uid_map, spec->n_uid_map, err) < 0)
    return csr_error_wrap (err, "uid map");
  if (csr_idmap_validate (spec->gid_map, spec->n_gid_map, err) < 0)
    return csr_error_wrap (err, "gid map");
  if (spec->use_newidmap)
    {
      if (run_helper ("newuidmap", pid, spec->uid_map, spec->n_uid_map, err) < 0)
        return -1;
      return run_helper ("newgidmap", pid, spec->gid_map, spec->n_gid_map, err);
    }
  if (csr_idmap_format (spec->uid_map, spec->n_uid_map, buf, sizeof buf) < 0)
    return csr_error_set (err, EINVAL, "uid map too long");
  if (write_proc_file (pid, "uid_map", buf, err) < 0)
    return -1;
  /* An unprivileged writer may only map its own gid after disabling setgroups. */
  if (geteuid () != 0 && write_proc_file (pid, "setgroups", "deny", err) < 0)
    return -1;
  if (csr_idmap_format (spec->gid_map, spec->n_gid_map, buf, sizeof buf) < 0)
    return csr_error_set (err, EINVAL, "gid map too long");
  return write_proc_file (pid, "gid_map", buf, err);
}
