/* csrun — walking the components of a path, lexically (no file system
 * access): "a//./b/" is "a", ".", "b". */
#ifndef CSRUN_UTIL_PATH_H
#define CSRUN_UTIL_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* The next component of the path at *P: skips '/'s, returns where the
 * component starts and its length in *LEN, and moves *P past it; NULL at
 * the end of the path.
 *
 *   const char *p = path, *c;
 *   size_t n;
 *   while ((c = csr_path_next (&p, &n)) != NULL)
 *     ...
 */
const char *csr_path_next (const char **p, size_t *len);
/* Whether the component C[0..N) is "." or "..". */
bool csr_path_is_dot (const char *c, size_t n);
bool csr_path_is_dotdot (const char *c, size_t n);

#endif
