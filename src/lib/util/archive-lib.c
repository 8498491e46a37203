/* csrun — libarchive loaded on first use (archive-lib.h). */
#include "config.h"
#include "archive-lib.h"

#include <dlfcn.h>

#ifndef CSR_LIBARCHIVE_SONAME
#define CSR_LIBARCHIVE_SONAME "libarchive.so.13"
#endif

struct csr_la csr_la;

int
csr_la_load (csr_error **err)
{
  if (csr_la.loaded)
    return 0;
  void *h = dlopen (CSR_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL)
    return csr_error_set (err, 0, "cannot load libarchive: %s", dlerror ());
#define LA_LOAD(f)                                                                                 \
  if ((*(void **)&csr_la.f = dlsym (h, #f)) == NULL)                                               \
    return csr_error_set (err, 0, "libarchive: %s", dlerror ());
  CSR_LA_FUNCS (LA_LOAD)
#undef LA_LOAD
  csr_la.loaded = true;
  return 0;
}

void
csr_la_read_freep (struct archive **a)
{
  if (*a && csr_la.loaded)
    csr_la.archive_read_free (*a);
}

void
csr_la_write_freep (struct archive **a)
{
  if (*a && csr_la.loaded)
    csr_la.archive_write_free (*a);
}
