#ifndef RINGD_CSQLITE_SHIM_H
#define RINGD_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
