/* csrun — what config.c and config-linux.c share: the vector getters and
 * checks of the config.json parser.  Not installed. */
#ifndef CSRUN_OCI_CONFIG_INTERNAL_H
#define CSRUN_OCI_CONFIG_INTERNAL_H

#include <stdint.h>

#include "../util/json.h"
#include "oci-config.h"

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))
/* uid_t/gid_t (uid_t) -1 means "unchanged" to setresuid(2) and chown(2): not an id. */
#define OCI_ID_MAX ((uint64_t)UINT32_MAX - 1)

/* A name of the spec and its C value (rlimits, namespaces). */
struct name_value
{
  const char *name;
  int value;
};

void oci_cfg_strv_free (char **v, size_t n);
/* A check of each string of a vector (may be NULL). */
typedef int (*str_check_fn) (struct csr_jpath *x, const char *s);
/* OBJ[KEY], an array of strings, into a NULL-terminated vector (allocated
 * even when empty); CHECK (may be NULL) validates each element. */
int oci_cfg_get_strv (struct csr_jpath *x, yajl_val obj, const char *key, bool required,
                      char ***out, size_t *n_out, str_check_fn check);
/* OBJ[KEY], an object whose values are all strings, as parallel key/value vectors. */
int oci_cfg_get_string_map (struct csr_jpath *x, yajl_val obj, const char *key, char ***keys,
                            char ***values, size_t *n_out);
/* OBJ[KEY], an optional array: *ARR, and an array of its length with
 * ELEM-byte elements in *OUT and *N (left alone when empty).  1 when present,
 * 0 when absent, -1 on an error. */
int oci_cfg_get_array_alloc (struct csr_jpath *x, yajl_val obj, const char *key, size_t elem,
                             yajl_val *arr, size_t *saved, void **out, size_t *n);
/* "expected an absolute path, got '...'" */
int oci_cfg_check_absolute (struct csr_jpath *x, const char *s);

/* "linux" of the document into C (config-linux.c). */
int oci_cfg_parse_linux (struct csr_jpath *x, yajl_val doc, struct oci_config *c);

#endif
