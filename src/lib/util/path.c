/* csrun — the path-component walker (path.h). */

#include "config.h"
#include "path.h"

#include <string.h>

const char *
csr_path_next (const char **p, size_t *len)
{
  const char *s = *p;
  while (*s == '/')
    s++;
  if (*s == '\0')
    {
      *p = s;
      *len = 0;
      return NULL;
    }
  const char *e = strchrnul (s, '/');
  *len = (size_t)(e - s);
  *p = e;
  return s;
}

bool
csr_path_is_dot (const char *c, size_t n)
{
  return n == 1 && c[0] == '.';
}

bool
csr_path_is_dotdot (const char *c, size_t n)
{
  return n == 2 && c[0] == '.' && c[1] == '.';
}
