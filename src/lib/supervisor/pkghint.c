/* csrun — the hint of a ModuleNotFoundError (see pkghint.h). */
#include "config.h"
#include "pkghint.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/datadir.h"
#include "../util/fs.h"

bool
csr_missing_module (const char *message, char *mod, size_t size)
{
  static const char prefix[] = "No module named '";
  if (message == NULL || strncmp (message, prefix, sizeof prefix - 1) != 0)
    return false;
  const char *s = message + sizeof prefix - 1;
  /* A dotted name means its parent was found (Python names the first part
   * that is missing: `import yaml.constructor` without yaml says 'yaml'):
   * that is no missing package. */
  size_t n = strcspn (s, ".'");
  if (n == 0 || n >= size || s[n] != '\'' || s[n + 1] != '\0')
    return false;
  for (size_t i = 0; i < n; i++)
    {
      unsigned char c = (unsigned char)s[i];
      if (!(isalpha (c) || c == '_' || (i > 0 && isdigit (c))))
        return false;
    }
  memcpy (mod, s, n);
  mod[n] = '\0';
  return true;
}

void
csr_module_package (const char *conf, size_t len, const char *module, char *pkg, size_t size,
                    bool *listed)
{
  *listed = false;
  size_t mlen = strlen (module);
  for (const char *l = conf, *end = conf ? conf + len : NULL; l && l < end;)
    {
      const char *eol = memchr (l, '\n', (size_t)(end - l));
      if (eol == NULL)
        eol = end;
      const char *p = l;
      while (p < eol && (*p == ' ' || *p == '\t'))
        p++;
      if (p < eol && *p != '#' && (size_t)(eol - p) > mlen && memcmp (p, module, mlen) == 0
          && (p[mlen] == ' ' || p[mlen] == '\t'))
        {
          const char *q = p + mlen;
          while (q < eol && (*q == ' ' || *q == '\t'))
            q++;
          size_t n = strcspn (q, " \t#\n");
          if (q + n > eol)
            n = (size_t)(eol - q);
          if (n > 0 && n < size)
            {
              memcpy (pkg, q, n);
              pkg[n] = '\0';
              *listed = true;
              return;
            }
        }
      l = eol + 1;
    }
  size_t j = (size_t)snprintf (pkg, size, "python3-");
  for (const char *c = module; *c && j + 1 < size; c++)
    pkg[j++] = *c == '_' ? '-' : (char)tolower ((unsigned char)*c);
  pkg[j] = '\0';
}

char *
csr_module_hint (const struct csr_diagnosis *d, const char *conf_path)
{
  char mod[128], pkg[160];
  if (d->error_type == NULL || strcmp (d->error_type, "ModuleNotFoundError") != 0
      || !csr_missing_module (d->message, mod, sizeof mod))
    return NULL;
  cleanup_free char *dflt = conf_path ? NULL : csr_find_policy ("packages.conf");
  cleanup_free char *conf = NULL;
  size_t len = 0;
  csr_error *e = NULL;
  const char *path = conf_path ? conf_path : dflt;
  if (path == NULL || csr_read_file (path, 1 << 20, &conf, &len, &e) < 0)
    {
      csr_error_free (e);
      conf = NULL;
      len = 0;
    }
  bool listed;
  csr_module_package (conf, len, mod, pkg, sizeof pkg, &listed);
  char *hint = NULL;
  if (asprintf (
          &hint,
          "the rootfs has no module '%s'; %s Debian package %s: run with `csrun run --with %s "
          "...` (or add it once: `csrun rootfs add %s`)",
          mod, listed ? "it is in the" : "it is probably in the", pkg, pkg, pkg)
      < 0)
    return NULL;
  return hint;
}
