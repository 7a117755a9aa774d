#ifndef RINGD_CSYSTEMD_SHIM_H
#define RINGD_CSYSTEMD_SHIM_H
/* sd-daemon only: socket activation (sd_listen_fds) and readiness
   notification (sd_notify). */
#include <systemd/sd-daemon.h>
#endif
