/* Package layers: the pure parts (names, keys) and the ModuleNotFoundError
 * hint's table lookup. */
#include "config.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "rootfs/layer.h"
#include "supervisor/pkghint.h"

static const char base[] = "26d1d582b4fb49dee7e80b5b37db631adbbf6f2ba42fa91d84b16c9566379566";

Test (layer, valid_names)
{
  const char *good[] = { "python3-numpy", "libc6", "g++", "libstdc++6", "python3.11", "7zip" };
  const char *bad[] = { "",    "a",   "Python3", "python3_numpy",     "-x",       "+x", ".x",
                        "a b", "a;b", "a/b",     "python3-numpy=1.0", "pkg:amd64" };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    cr_assert (csr_layer_valid_name (good[i]), "%s", good[i]);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert (!csr_layer_valid_name (bad[i]), "%s", bad[i]);
}

Test (layer, key_is_the_sorted_unique_set_over_the_base)
{
  char k1[CSR_SHA256_HEX_LEN + 1], k2[CSR_SHA256_HEX_LEN + 1], k3[CSR_SHA256_HEX_LEN + 1],
      k4[CSR_SHA256_HEX_LEN + 1];
  const char *a[] = { "python3-pandas", "python3-numpy" };
  const char *b[] = { "python3-numpy", "python3-pandas", "python3-numpy" };
  const char *c[] = { "python3-numpy" };
  cr_assert_eq (csr_layer_key (base, a, 2, k1, NULL), 0);
  cr_assert_eq (csr_layer_key (base, b, 3, k2, NULL), 0);
  cr_assert_eq (csr_layer_key (base, c, 1, k3, NULL), 0);
  cr_assert_str_eq (k1, k2);
  cr_assert_str_neq (k1, k3);
  /* Another base, another layer. */
  char other[] = "16d1d582b4fb49dee7e80b5b37db631adbbf6f2ba42fa91d84b16c9566379566";
  cr_assert_eq (csr_layer_key (other, c, 1, k4, NULL), 0);
  cr_assert_str_neq (k3, k4);
  /* The documented form: sha256 ("csrun-layer 1\n" BASE "\n" NAME "\n"...). */
  cr_assert_str_eq (k3, "8735e7b4ab138302157c6d46c1b00d66d497ea3f78073b9544550bf8bc3b7907");
}

Test (pkghint, missing_module)
{
  char m[64];
  cr_assert (csr_missing_module ("No module named 'pandas'", m, sizeof m));
  cr_assert_str_eq (m, "pandas");
  /* X was found, X.sub was not: no package is missing. */
  cr_assert (!csr_missing_module ("No module named 'numpy.foo'", m, sizeof m));
  cr_assert (!csr_missing_module ("No module named ''", m, sizeof m));
  cr_assert (!csr_missing_module ("No module named 'a b'", m, sizeof m));
  cr_assert (!csr_missing_module ("No module named '9x'", m, sizeof m));
  cr_assert (!csr_missing_module ("cannot import name 'x'", m, sizeof m));
  cr_assert (!csr_missing_module (NULL, m, sizeof m));
}

Test (pkghint, table_then_default)
{
  const char conf[] = "# comment\nnumpy  python3-numpy\n  PIL\tpython3-pil  # Pillow\nsklearn "
                      "python3-sklearn\n";
  char p[64];
  bool listed;
  csr_module_package (conf, sizeof conf - 1, "PIL", p, sizeof p, &listed);
  cr_assert (listed);
  cr_assert_str_eq (p, "python3-pil");
  csr_module_package (conf, sizeof conf - 1, "sklearn", p, sizeof p, &listed);
  cr_assert_str_eq (p, "python3-sklearn");
  /* A prefix of a listed name is not that name. */
  csr_module_package (conf, sizeof conf - 1, "num", p, sizeof p, &listed);
  cr_assert (!listed);
  cr_assert_str_eq (p, "python3-num");
  csr_module_package (NULL, 0, "Foo_Bar", p, sizeof p, &listed);
  cr_assert (!listed);
  cr_assert_str_eq (p, "python3-foo-bar");
}

Test (pkghint, hint_text)
{
  struct csr_diagnosis d = { "ModuleNotFoundError", "No module named 'bs4'", 1, NULL, NULL };
  char *h = csr_module_hint (&d, "/nonexistent/packages.conf");
  cr_assert_not_null (h);
  cr_assert (strstr (h, "csrun run --with python3-bs4") != NULL, "%s", h);
  cr_assert (strstr (h, "probably") != NULL, "%s", h);
  free (h);
  struct csr_diagnosis n = { "NameError", "name 'x' is not defined", 1, NULL, NULL };
  cr_assert_null (csr_module_hint (&n, NULL));
}
