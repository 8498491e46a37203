/* csrun — scope-based cleanup helpers (GCC/Clang cleanup attribute). */
#ifndef CSRUN_CLEANUP_H
#define CSRUN_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void
csr_freep (void *p)
{
  free (*(void **)p);
}

static inline void
csr_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
      *fd = -1;
    }
}

static inline void
csr_fclosep (FILE **f)
{
  if (*f)
    {
      int saved = errno;
      fclose (*f);
      errno = saved;
    }
}

static inline void
csr_closedirp (DIR **d)
{
  if (*d)
    {
      int saved = errno;
      closedir (*d);
      errno = saved;
    }
}

#define cleanup_free __attribute__ ((cleanup (csr_freep)))
#define cleanup_close __attribute__ ((cleanup (csr_closep)))
#define cleanup_file __attribute__ ((cleanup (csr_fclosep)))
#define cleanup_dir __attribute__ ((cleanup (csr_closedirp)))

/* Transfer ownership out of a cleanup_* variable. */
#define steal_pointer(pp)                                                                          \
  ({                                                                                               \
    __typeof__ (*(pp)) _stolen = *(pp);                                                            \
    *(pp) = NULL;                                                                                  \
    _stolen;                                                                                       \
  })
#define steal_fd(fdp)                                                                              \
  ({                                                                                               \
    int _stolen = *(fdp);                                                                          \
    *(fdp) = -1;                                                                                   \
    _stolen;                                                                                       \
  })

#endif
