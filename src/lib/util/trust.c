/* csrun — trusted directories (the rule is in trust.h).
 *
 * The path is walked one component at a time from "/", each opened with
 * O_NOFOLLOW relative to the previous one and checked with fstat() on the
 * descriptor, so what is checked is what is used.  Like OpenSSH's StrictModes
 * for ~/.ssh (every directory up the path owned by root or the user and not
 * group/world-writable), plus what a cache under /tmp needs: a sticky
 * directory can hold it, since nobody else can rename or remove what is ours
 * in there. */
#include "config.h"
#include "trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cleanup.h"
#include "fs.h"
#include "log.h"

/* As many symlinks as the kernel follows in one path (MAXSYMLINKS). */
#define MAX_HOPS 40

bool
csr_trust_dir_ok (uid_t owner, mode_t mode, uid_t euid, bool ancestor, bool overflow_ok,
                  uid_t overflow_uid)
{
  bool owner_ok
      = owner == euid || (ancestor && (owner == 0 || (overflow_ok && owner == overflow_uid)));
  bool mode_ok = (mode & (S_IWGRP | S_IWOTH)) == 0 || (ancestor && (mode & S_ISVTX));
  return owner_ok && mode_ok;
}

/* "alice (uid 1000)", or "uid 1000" for a uid without a name. */
static void
describe_uid (uid_t uid, char *buf, size_t size)
{
  struct passwd pw, *res = NULL;
  char tmp[1024];
  if (getpwuid_r (uid, &pw, tmp, sizeof tmp, &res) == 0 && res && res->pw_name)
    snprintf (buf, size, "%s (uid %u)", res->pw_name, (unsigned)uid);
  else
    snprintf (buf, size, "uid %u", (unsigned)uid);
}

struct walk
{
  const char *what;  /* "cache directory" */
  const char *given; /* the path as given, for messages */
  uid_t euid;
  int overflow; /* -1 unknown, 0 no, 1 host root unmapped: accept overflow_uid above */
  uid_t overflow_uid;
  char canon[PATH_MAX]; /* "" is "/" */
};

/* In a user namespace without host root in its uid map, host root's files
 * show as the overflow uid. */
static void
detect_overflow (struct walk *w)
{
  w->overflow = 0;
  w->overflow_uid = 65534;
  cleanup_file FILE *f = fopen ("/proc/self/uid_map", "re");
  if (f == NULL)
    return;
  unsigned long inside, outside, count;
  bool root_mapped = false;
  while (fscanf (f, "%lu %lu %lu", &inside, &outside, &count) == 3)
    if (outside == 0)
      root_mapped = true;
  if (root_mapped)
    return;
  cleanup_file FILE *o = fopen ("/proc/sys/kernel/overflowuid", "re");
  unsigned long v;
  if (o && fscanf (o, "%lu", &v) == 1)
    w->overflow_uid = (uid_t)v;
  w->overflow = 1;
}

/* Check the directory (or symlink, LINK) HERE: -2 with *err when refused. */
static int
check_component (struct walk *w, const struct stat *st, const char *here, bool ancestor, bool link,
                 csr_error **err)
{
  mode_t mode = link ? 0 : st->st_mode;
  if (csr_trust_dir_ok (st->st_uid, mode, w->euid, ancestor, false, 0))
    return 0;
  if (ancestor && w->overflow < 0)
    detect_overflow (w);
  if (csr_trust_dir_ok (st->st_uid, mode, w->euid, ancestor, w->overflow == 1, w->overflow_uid))
    return 0;
  char who[300], where[PATH_MAX + 8] = "";
  if (strcmp (here, w->given) != 0)
    snprintf (where, sizeof where, "'%s' is ", here);
  bool owner_bad
      = !csr_trust_dir_ok (st->st_uid, 0, w->euid, ancestor, w->overflow == 1, w->overflow_uid);
  if (owner_bad)
    {
      describe_uid (st->st_uid, who, sizeof who);
      csr_error_set (err, 0, "%s '%s': refused: %s%sowned by %s, not by you (uid %u)%s", w->what,
                     w->given, where, link ? "a symbolic link " : "", who, (unsigned)w->euid,
                     ancestor ? " or root" : "");
    }
  else
    csr_error_set (err, 0, "%s '%s': refused: %swritable by group or others (mode %04o)", w->what,
                   w->given, where, (unsigned)(st->st_mode & 07777));
  return CSR_TRUST_REFUSED;
}

static int
join (char *out, const char *dir, const char *name)
{
  int n = snprintf (out, PATH_MAX, "%s/%s", dir, name);
  if (n < 0 || n >= PATH_MAX)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  return 0;
}

static int
open_root (struct walk *w, csr_error **err)
{
  cleanup_close int fd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return csr_error_errno (err, "%s '%s': open /", w->what, w->given);
  int r = check_component (w, &st, "/", true, false, err);
  if (r < 0)
    return r;
  w->canon[0] = '\0';
  return steal_fd (&fd);
}

/* Enter NAME from *FD: 0 (*FD is now NAME's), 1 a trusted symlink (its
 * target in *TARGET), or negative.  LAST: NAME ends the path (a directory is
 * then checked as the directory itself, for the message). */
static int
enter (struct walk *w, int *fd, const char *name, bool last, mode_t create_mode, char **target,
       csr_error **err)
{
  char here[PATH_MAX];
  if (join (here, w->canon, name) < 0)
    return csr_error_errno (err, "%s '%s'", w->what, w->given);
  bool created = false;
  for (int tries = 0; tries < 8; tries++)
    {
      struct stat st;
      if (fstatat (*fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno != ENOENT || create_mode == 0)
            return csr_error_errno (err, "%s '%s': '%s'", w->what, w->given, here);
          if (mkdirat (*fd, name, create_mode) == 0)
            created = true;
          else if (errno != EEXIST)
            return csr_error_errno (err, "%s '%s': create '%s'", w->what, w->given, here);
          continue;
        }
      if (S_ISLNK (st.st_mode))
        {
          int r = check_component (w, &st, here, true, true, err);
          if (r < 0)
            return r;
          char buf[PATH_MAX];
          ssize_t n = readlinkat (*fd, name, buf, sizeof buf);
          if (n < 0 || (size_t)n >= sizeof buf)
            return csr_error_errno (err, "%s '%s': read the link '%s'", w->what, w->given, here);
          *target = strndup (buf, (size_t)n);
          if (*target == NULL)
            return csr_error_errno (err, "%s '%s'", w->what, w->given);
          return 1;
        }
      if (!S_ISDIR (st.st_mode))
        return csr_error_set (err, ENOTDIR, "%s '%s': '%s'", w->what, w->given, here);
      /* O_PATH where we may search but not read (a 0711 directory of root's). */
      cleanup_close int nfd = openat (*fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (nfd < 0 && errno == EACCES)
        nfd = openat (*fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (nfd < 0)
        {
          if (errno == ELOOP || errno == ENOTDIR || errno == ENOENT)
            continue; /* replaced between fstatat and openat: look again */
          return csr_error_errno (err, "%s '%s': open '%s'", w->what, w->given, here);
        }
      /* Exactly CREATE_MODE whatever the umask. */
      if (created && fchmod (nfd, create_mode) < 0)
        return csr_error_errno (err, "%s '%s': chmod '%s'", w->what, w->given, here);
      if (fstat (nfd, &st) < 0)
        return csr_error_errno (err, "%s '%s': stat '%s'", w->what, w->given, here);
      int r = check_component (w, &st, here, !last, false, err);
      if (r < 0)
        return r;
      close (*fd);
      *fd = steal_fd (&nfd);
      memcpy (w->canon, here, strlen (here) + 1);
      return 0;
    }
  return csr_error_set (err, EAGAIN, "%s '%s': '%s' keeps changing", w->what, w->given, here);
}

/* Re-open w->canon (no symlinks, every part checked before) after "..". */
static int
reopen (struct walk *w, csr_error **err)
{
  char path[PATH_MAX];
  memcpy (path, w->canon, strlen (w->canon) + 1);
  int fd = open_root (w, err);
  char *save = NULL;
  for (char *c = strtok_r (path, "/", &save); fd >= 0 && c; c = strtok_r (NULL, "/", &save))
    {
      char *target = NULL;
      int r = enter (w, &fd, c, false, 0, &target, err);
      free (target);
      if (r != 0)
        {
          close (fd);
          return r < 0 ? r : csr_error_set (err, EAGAIN, "%s '%s': changed", w->what, w->given);
        }
    }
  return fd;
}

static char *
absolute (const char *path, csr_error **err)
{
  char *out = NULL;
  if (path[0] == '/')
    out = strdup (path);
  else
    {
      cleanup_free char *cwd = getcwd (NULL, 0);
      if (cwd == NULL || asprintf (&out, "%s/%s", cwd, path) < 0)
        out = NULL;
    }
  if (out == NULL)
    csr_error_errno (err, "'%s'", path);
  return out;
}

int
csr_trust_open_dir (const char *what, const char *path, mode_t create_mode, char **canonical,
                    csr_error **err)
{
  if (canonical)
    *canonical = NULL;
  if (path == NULL || *path == '\0')
    return csr_error_set (err, EINVAL, "%s: empty path", what);
  struct walk w = { .what = what, .given = path, .euid = geteuid (), .overflow = -1 };
  cleanup_free char *todo = absolute (path, err);
  if (todo == NULL)
    return -1;
  cleanup_close int fd = open_root (&w, err);
  if (fd < 0)
    return fd;
  size_t pos = 0;
  int hops = 0;
  for (;;)
    {
      while (todo[pos] == '/')
        pos++;
      if (todo[pos] == '\0')
        break;
      size_t n = strcspn (todo + pos, "/");
      if (n > NAME_MAX)
        return csr_error_set (err, ENAMETOOLONG, "%s '%s'", what, path);
      char name[NAME_MAX + 1];
      memcpy (name, todo + pos, n);
      name[n] = '\0';
      pos += n;
      if (strcmp (name, ".") == 0)
        continue;
      if (strcmp (name, "..") == 0)
        {
          char *slash = strrchr (w.canon, '/');
          if (slash)
            *slash = '\0';
          close (steal_fd (&fd));
          if ((fd = reopen (&w, err)) < 0)
            return fd;
          continue;
        }
      cleanup_free char *target = NULL;
      bool last = todo[pos + strspn (todo + pos, "/")] == '\0';
      int r = enter (&w, &fd, name, last, create_mode, &target, err);
      if (r < 0)
        return r;
      if (r == 0)
        continue;
      if (++hops > MAX_HOPS)
        return csr_error_set (err, ELOOP, "%s '%s'", what, path);
      /* Splice the link's target in front of what is left. */
      char *next = NULL;
      if (asprintf (&next, "%s/%s", target, todo + pos) < 0)
        return csr_error_errno (err, "%s '%s'", what, path);
      free (todo);
      todo = next;
      pos = 0;
      if (target[0] == '/')
        {
          close (steal_fd (&fd));
          if ((fd = open_root (&w, err)) < 0)
            return fd;
        }
    }
  /* The directory itself: ours, and writable by nobody else. */
  const char *here = w.canon[0] ? w.canon : "/";
  cleanup_close int dfd = openat (fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;
  if (dfd < 0 || fstat (dfd, &st) < 0)
    return csr_error_errno (err, "%s '%s': open '%s'", what, path, here);
  int r = check_component (&w, &st, here, false, false, err);
  if (r < 0)
    return r;
  if (canonical && (*canonical = strdup (here)) == NULL)
    return csr_error_errno (err, "%s '%s'", what, path);
  return steal_fd (&dfd);
}

int
csr_trust_check_entry (const struct stat *st, bool want_file, const char *path, csr_error **err)
{
  if (want_file ? !S_ISREG (st->st_mode) : !S_ISDIR (st->st_mode))
    return csr_error_set (err, 0, "'%s': not a %s", path, want_file ? "regular file" : "directory");
  if (st->st_uid != geteuid ())
    {
      char who[300];
      describe_uid (st->st_uid, who, sizeof who);
      return csr_error_set (err, 0, "'%s': refused: owned by %s, not by you (uid %u)", path, who,
                            (unsigned)geteuid ());
    }
  if (st->st_mode & (S_IWGRP | S_IWOTH))
    return csr_error_set (err, 0, "'%s': refused: writable by group or others (mode %04o)", path,
                          (unsigned)(st->st_mode & 07777));
  return 0;
}

int
csr_trust_open_subdir (int dirfd, const char *dir, const char *name, mode_t create_mode,
                       csr_error **err)
{
  char path[PATH_MAX];
  if (join (path, dir, name) < 0)
    return csr_error_errno (err, "'%s/%s'", dir, name);
  bool created = false;
  for (int tries = 0; tries < 8; tries++)
    {
      cleanup_close int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          if (errno != ENOENT || create_mode == 0)
            return csr_error_errno (err, "'%s'", path);
          if (mkdirat (dirfd, name, create_mode) == 0)
            created = true;
          else if (errno != EEXIST)
            return csr_error_errno (err, "create '%s'", path);
          continue;
        }
      struct stat st;
      if (created && fchmod (fd, create_mode) < 0)
        return csr_error_errno (err, "chmod '%s'", path);
      if (fstat (fd, &st) < 0)
        return csr_error_errno (err, "stat '%s'", path);
      if (csr_trust_check_entry (&st, false, path, err) < 0)
        return CSR_TRUST_REFUSED;
      return steal_fd (&fd);
    }
  return csr_error_set (err, EAGAIN, "'%s' keeps changing", path);
}

int
csr_trust_read_at (int dirfd, const char *name, size_t max, char **out, size_t *len,
                   csr_error **err)
{
  *out = NULL;
  *len = 0;
  cleanup_close int fd
      = openat (dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return csr_error_errno (err, "'%s'", name);
  struct stat st;
  if (fstat (fd, &st) < 0)
    return csr_error_errno (err, "'%s'", name);
  if (csr_trust_check_entry (&st, true, name, err) < 0)
    return -1;
  if ((size_t)st.st_size > max)
    return csr_error_set (err, EFBIG, "'%s': %lld bytes", name, (long long)st.st_size);
  return csr_read_fd (fd, max, out, len, err);
}

int
csr_trust_write_at (int dirfd, const char *name, const void *data, size_t len, mode_t mode,
                    csr_error **err)
{
  char tmp[NAME_MAX + 1];
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 16; tries++)
    {
      unsigned r = 0;
      if (getrandom (&r, sizeof r, GRND_NONBLOCK) < 0)
        r = (unsigned)tries;
      if ((size_t)snprintf (tmp, sizeof tmp, ".tmp-%.200s-%ld-%08x", name, (long)getpid (), r)
          >= sizeof tmp)
        return csr_error_set (err, ENAMETOOLONG, "write '%s'", name);
      fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0 && errno != EEXIST)
        return csr_error_errno (err, "write '%s': create a temporary file", name);
    }
  if (fd < 0)
    return csr_error_errno (err, "write '%s': create a temporary file", name);
  if (fchmod (fd, mode) < 0)
    csr_error_errno (err, "write '%s': chmod", name);
  else if (csr_write_all (fd, data, len, err) < 0)
    csr_error_wrap (err, "write '%s'", name);
  else if (fsync (fd) < 0)
    csr_error_errno (err, "write '%s': fsync", name);
  else
    {
      int r = close (steal_fd (&fd));
      if (r < 0)
        csr_error_errno (err, "write '%s': close", name);
      else if (renameat (dirfd, tmp, dirfd, name) < 0)
        csr_error_errno (err, "write '%s': rename", name);
      else if (fsync (dirfd) < 0)
        return csr_error_errno (err, "write '%s': fsync the directory", name);
      else
        return 0;
    }
  if (fd >= 0)
    close (fd);
  (void)unlinkat (dirfd, tmp, 0);
  return -1;
}

int
csr_trust_open_cache (const char *what, const char *cache_dir, const char *name, csr_error **err)
{
  cleanup_error csr_error *e = NULL;
  cleanup_free char *canon = NULL;
  cleanup_close int cfd = csr_trust_open_dir (what, cache_dir, 0700, &canon, &e);
  int fd = cfd;
  if (cfd >= 0)
    fd = csr_trust_open_subdir (cfd, canon, name, 0700, &e);
  if (fd == CSR_TRUST_REFUSED)
    {
      csr_error_set (err, e->status, "%s", e->msg);
      return CSR_TRUST_REFUSED;
    }
  if (fd < 0)
    csr_debug ("%s: %s", what, csr_error_text (e));
  return fd;
}
