/* csrun — the hint of a ModuleNotFoundError: the Debian package that has the
 * module (policies/packages.conf) and the command that adds it as a layer
 * (csrun run --with PKG, rootfs/layer.h). */
#ifndef CSRUN_PKGHINT_H
#define CSRUN_PKGHINT_H

#include <stdbool.h>
#include <stddef.h>

#include "classify.h"

/* The module of a "No module named 'X'" MESSAGE into MOD (SIZE bytes): true
 * when MESSAGE is one and X an identifier.  'X.sub' is not: Python names
 * the first missing part, so X was found and only its submodule is not. */
bool csr_missing_module (const char *message, char *mod, size_t size);

/* The package of MODULE in the packages.conf text CONF[0..LEN): *LISTED
 * tells whether it had an entry; else the Debian Python policy's name
 * python3-<module lower-cased, '_' as '-'>.  PKG gets SIZE bytes at most. */
void csr_module_package (const char *conf, size_t len, const char *module, char *pkg, size_t size,
                         bool *listed);

/* The hint for the diagnosis D when it is a ModuleNotFoundError (malloc'ed;
 * NULL otherwise), CONF_PATH being packages.conf (NULL: the default one;
 * an unreadable file means the default names only). */
char *csr_module_hint (const struct csr_diagnosis *d, const char *conf_path);

#endif
