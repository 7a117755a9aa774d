#ifndef RINGD_COPENSSL_SHIM_H
#define RINGD_COPENSSL_SHIM_H
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* OpenSSL spells these as macros, which Swift cannot call. */

static inline int ringd_ssl_ctx_set_min_proto_version(SSL_CTX *ctx, int version) {
    return (int)SSL_CTX_set_min_proto_version(ctx, version);
}

/* Buffers released while a connection is idle; no renegotiation (a CPU
   sink for attackers) and no TLS-level compression (CRIME). No session
   cache in memory: resumption works through stateless tickets, which cost
   the server nothing per connection. */
static inline void ringd_ssl_ctx_harden(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static inline int ringd_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* ALPN on the server: pick http/1.1 when the client offers it, and refuse
   the handshake (no_application_protocol) when it offers only others. */
static const unsigned char ringd_alpn_http11[] = { 8, 'h', 't', 't', 'p', '/', '1', '.', '1' };

static inline int ringd_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                                    const unsigned char *in, unsigned int inlen, void *arg) {
    (void)ssl; (void)arg;
    unsigned char *selected = NULL;
    if (SSL_select_next_proto(&selected, outlen, ringd_alpn_http11, sizeof ringd_alpn_http11, in, inlen)
        != OPENSSL_NPN_NEGOTIATED) {
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    }
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

static inline void ringd_ssl_ctx_select_http11(SSL_CTX *ctx) {
    SSL_CTX_set_alpn_select_cb(ctx, ringd_alpn_select, NULL);
}

static inline int ringd_ssl_offer_http11(SSL *ssl) {
    return SSL_set_alpn_protos(ssl, ringd_alpn_http11, sizeof ringd_alpn_http11);
}

/* The bytes a memory BIO holds allocated, whatever it holds now. */
static inline size_t ringd_bio_mem_capacity(BIO *bio) {
    BUF_MEM *memory = NULL;
    BIO_get_mem_ptr(bio, &memory);
    return memory == NULL ? 0 : memory->max;
}

#endif
