/* csrun — the jail's network namespace (libnl-route-3). */
#ifndef CSRUN_NET_H
#define CSRUN_NET_H

#include "../util/error.h"

/* Bring the loopback interface up in the current (new, empty) network namespace. */
int csr_net_loopback_up (csr_error **err);

#endif
