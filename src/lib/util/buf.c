/* csrun — growing a byte buffer (see buf.h). */
#include "config.h"
#include "buf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int
csr_buf_reserve (char **buf, size_t *cap, size_t need, size_t first)
{
  if (need <= *cap)
    return 0;
  size_t n = *cap ? *cap : first;
  while (n < need)
    {
      if (n > SIZE_MAX / 2)
        {
          errno = ENOMEM;
          return -1;
        }
      n *= 2;
    }
  char *nb = realloc (*buf, n);
  if (nb == NULL)
    {
      errno = ENOMEM;
      return -1;
    }
  *buf = nb;
  *cap = n;
  return 0;
}
