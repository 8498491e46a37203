/* csrun — linux.resources JSON into the typed limits of the cgroup layer
 * (struct csr_cgroup_resources, cgroup/cgroup.h).  Parsing only: every
 * cgroupfs write is the cgroup layer's. */
#ifndef CSRUN_OCI_RESOURCES_H
#define CSRUN_OCI_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "../cgroup/cgroup.h"
#include "../util/error.h"

/* Parse the linux.resources object JSON[0..LEN) into *R (zeroed first; its
 * "devices" array is left to the config parser, which has the rules'
 * syntax).  Strict: wrong types, out-of-range values (swappiness above 100,
 * a blkio weight outside 10..1000, a negative hugetlb limit...) and
 * malformed entries are errors naming the JSON path. */
int oci_cgroup_resources_parse (const char *json, size_t len, struct csr_cgroup_resources *r,
                                csr_error **err);
/* Free what oci_cgroup_resources_parse allocated (not DEVICES). */
void oci_cgroup_resources_release (struct csr_cgroup_resources *r);
/* Whether R asks for anything beyond the device rules. */
bool oci_cgroup_resources_any (const struct csr_cgroup_resources *r);

#endif
