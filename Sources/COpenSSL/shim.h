#ifndef RINGD_COPENSSL_SHIM_H
#define RINGD_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#endif
