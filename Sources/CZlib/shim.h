#ifndef RINGD_CZLIB_SHIM_H
#define RINGD_CZLIB_SHIM_H
#include <zlib.h>
#endif
