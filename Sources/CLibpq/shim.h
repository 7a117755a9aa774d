#ifndef RINGD_CLIBPQ_SHIM_H
#define RINGD_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
