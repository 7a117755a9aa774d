#ifndef RINGD_CCURL_SHIM_H
#define RINGD_CCURL_SHIM_H
/* libcurl (Debian libcurl4-openssl-dev). curl_easy_setopt,
   curl_multi_setopt and curl_easy_getinfo are variadic, which Swift cannot
   call: these typed wrappers pass exactly one argument of the type the
   option takes (see each option's man page). */
#include <curl/curl.h>

/* CURL_GLOBAL_DEFAULT is a macro of an expression Swift does not import. */
static const long ringd_curl_global_default = CURL_GLOBAL_DEFAULT;

/* What the linked libcurl was built with (CURLVERSION_NOW is a macro alias). */
static inline curl_version_info_data *ringd_curl_version_info(void) {
    return curl_version_info(CURLVERSION_NOW);
}

/* The one response-body callback ringd sets (CURLOPT_WRITEFUNCTION). */
typedef size_t (*ringd_curl_write_callback)(char *data, size_t size, size_t count, void *context);

static inline CURLcode ringd_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ringd_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/* A string option; libcurl copies the string (except CURLOPT_POSTFIELDS,
   which ringd does not use: it sets CURLOPT_COPYPOSTFIELDS). */
static inline CURLcode ringd_curl_setopt_str(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/* A data pointer (CURLOPT_WRITEDATA, CURLOPT_ERRORBUFFER, CURLOPT_COPYPOSTFIELDS). */
static inline CURLcode ringd_curl_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/* A header list; it must outlive the transfer. */
static inline CURLcode ringd_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ringd_curl_setopt_writefn(CURL *handle, ringd_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

static inline CURLMcode ringd_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLcode ringd_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* Shares one kind of data (CURL_LOCK_DATA_SSL_SESSION) among the easy
   handles of one thread; no lock callbacks are needed then. */
static inline CURLSHcode ringd_curl_share_data(CURLSH *share, curl_lock_data data) {
    return curl_share_setopt(share, CURLSHOPT_SHARE, data);
}

/* The value of the last response's header field `name`, or NULL
   (CURLH_HEADER is a macro; the value lives until the handle is reused). */
static inline const char *ringd_curl_response_header(CURL *handle, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) return NULL;
    return header->value;
}

/* The result of a finished transfer (CURLMsg's data is a union). */
static inline CURLcode ringd_curl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

#endif
