/* csrun — creating a sandbox (the state directory, the keeper, double-forked
 * and detached) and collecting the ones whose keeper is gone. */
#include "config.h"
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../rootfs/layer.h"
#include "../rootfs/rootfs.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/syscalls.h"

/* The lock that makes "name unused + directory made" one step. */
static int
lock_root (int rootfd, csr_error **err)
{
  int fd = openat (rootfd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return csr_error_errno (err, "the sandbox directory's lock");
  while (flock (fd, LOCK_EX) < 0)
    if (errno != EINTR)
      {
        csr_error_errno (err, "lock the sandbox directory");
        close (fd);
        return -1;
      }
  return fd;
}

int
csr_sandbox_collect (int rootfd, char ***removed, size_t *n_removed, csr_error **err)
{
  char **ids;
  size_t n;
  if (removed)
    {
      *removed = NULL;
      *n_removed = 0;
    }
  if (csr_sandbox_list (rootfd, &ids, &n, err) < 0)
    return -1;
  int rc = 0;
  for (size_t i = 0; i < n; i++)
    {
      cleanup_close int dfd
          = openat (rootfd, ids[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (dfd < 0 || csr_sandbox_keeper_alive (dfd))
        continue;
      /* A directory younger than a few seconds without a lock is a create
       * that has not taken it yet: left alone. */
      struct stat st;
      if (fstat (dfd, &st) == 0 && time (NULL) - st.st_mtime < 5
          && faccessat (dfd, "keeper.lock", F_OK, 0) < 0)
        continue;
      if (csr_sandbox_reap (rootfd, ids[i], false, err) < 0)
        {
          rc = -1;
          continue;
        }
      if (removed)
        {
          char **nv = realloc (*removed, (*n_removed + 1) * sizeof *nv);
          if (nv)
            {
              *removed = nv;
              nv[*n_removed] = ids[i];
              ids[i] = NULL;
              (*n_removed)++;
            }
        }
    }
  csr_sandbox_list_free (ids, n);
  return rc;
}

static int
name_taken (int rootfd, const char *name, csr_error **err)
{
  char id[CSR_SANDBOX_ID_LEN + 1];
  csr_error *e = NULL;
  if (csr_sandbox_find (rootfd, name, id, &e) < 0)
    {
      int st = e->status;
      csr_error_free (e);
      return st == ENOENT ? 0 : csr_error_set (err, EINVAL, "name '%s' is ambiguous", name);
    }
  return csr_error_set (err, EEXIST, "a sandbox named '%s' exists already (%s)", name, id);
}

__attribute__ ((noreturn)) static void
become_keeper (int rootfd, int dirfd, int lockfd, int readyfd, struct csr_sandbox_spec *spec)
{
  int logfd
      = openat (dirfd, "keeper.log", O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0 || logfd < 0 || dup2 (devnull, 0) < 0 || dup2 (logfd, 1) < 0
      || dup2 (logfd, 2) < 0)
    _exit (125);
  close (devnull);
  close (logfd);
  int keep[] = { rootfd, dirfd, lockfd, readyfd };
  csr_close_all_but (keep, 4);
  if (chdir ("/") < 0)
    _exit (125);
  struct csr_keeper_boot b = { rootfd, dirfd, lockfd, readyfd, spec };
  csr_keeper_main (&b);
}

int
csr_sandbox_create (int rootfd, const char *root, struct csr_sandbox_spec *spec, csr_error **err)
{
  (void)root;
  csr_sandbox_collect (rootfd, NULL, NULL, NULL);
  /* --with: the layer is built here, where the caller sees it (the keeper
   * finds it cached). */
  if (spec->with)
    {
      cleanup_free char *cache_dir = NULL;
      csr_error *ignored = NULL;
      if (csr_rootfs_cache_dir (&cache_dir, &ignored) < 0)
        csr_error_freep (&ignored);
      struct csr_rootfs *r;
      struct csr_layer *l;
      int lr = csr_sandbox_trees (spec, cache_dir, &r, &l, err);
      csr_layer_free (l);
      csr_rootfs_free (r);
      if (lr < 0)
        return lr;
    }
  cleanup_close int rlock = lock_root (rootfd, err);
  if (rlock < 0)
    return -1;
  if (spec->name && name_taken (rootfd, spec->name, err) < 0)
    return -1;
  for (int tries = 0;; tries++)
    {
      if (csr_sandbox_new_id (spec->id, err) < 0)
        return -1;
      if (mkdirat (rootfd, spec->id, 0700) == 0)
        break;
      if (errno != EEXIST || tries > 8)
        return csr_error_errno (err, "create the sandbox's directory");
    }
  spec->created = (int64_t)time (NULL);
  int dirfd = openat (rootfd, spec->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  int lockfd = dirfd < 0 ? -1
                         : openat (dirfd, "keeper.lock",
                                   O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lockfd < 0 || flock (lockfd, LOCK_EX) < 0)
    {
      csr_error_errno (err, "create the sandbox's lock");
      goto fail;
    }
  if (csr_sandbox_spec_write (dirfd, spec, err) < 0)
    goto fail;
  close (rlock);
  rlock = -1;
  int ready[2];
  if (pipe2 (ready, O_CLOEXEC) < 0)
    {
      csr_error_errno (err, "pipe");
      goto fail;
    }
  fflush (NULL);
  pid_t mid = fork ();
  if (mid == 0)
    {
      close (ready[0]);
      if (setsid () < 0)
        _exit (125);
      signal (SIGHUP, SIG_IGN);
      pid_t k = fork ();
      if (k == 0)
        become_keeper (rootfd, dirfd, lockfd, ready[1], spec);
      _exit (k < 0 ? 125 : 0);
    }
  close (ready[1]);
  if (mid < 0)
    {
      close (ready[0]);
      csr_error_errno (err, "fork the keeper");
      goto fail;
    }
  int st;
  while (waitpid (mid, &st, 0) < 0 && errno == EINTR)
    ;
  char msg[1024];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof msg - 1
         && ((r = read (ready[0], msg + n, sizeof msg - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
    if (r > 0)
      n += (size_t)r;
  close (ready[0]);
  msg[n] = '\0';
  if (strcmp (msg, "ok\n") == 0)
    {
      close (lockfd);
      close (dirfd);
      return 0;
    }
  csr_error_set (err, 0, "%s", n ? msg : "the sandbox's keeper died while starting");
fail:
  if (lockfd >= 0)
    close (lockfd);
  if (dirfd >= 0)
    close (dirfd);
  csr_sandbox_reap (rootfd, spec->id, true, NULL);
  return -1;
}
