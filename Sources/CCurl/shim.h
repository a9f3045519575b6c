#include <curl/curl.h>
// curl_easy_setopt / curl_easy_getinfo / curl_multi_setopt are variadic: Swift cannot call them.
// Every wrapper is prefixed bookpipe_curl_ so it cannot clash with other shims.
static inline CURLcode bookpipe_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode bookpipe_curl_setopt_ptr(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode bookpipe_curl_setopt_str(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode bookpipe_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode bookpipe_curl_getinfo_ptr(CURL *h, CURLINFO i, void **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode bookpipe_curl_getinfo_double(CURL *h, CURLINFO i, double *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLMcode bookpipe_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

// Typed wrappers used by BookpipeEnrichment's HTTP client.
/// CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (same callback type).
static inline CURLcode bookpipe_curl_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback f) { return curl_easy_setopt(h, o, f); }
/// CURLOPT_HTTPHEADER.
static inline CURLcode bookpipe_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *list) { return curl_easy_setopt(h, o, list); }
/// CURLOPT_ERRORBUFFER (the buffer must hold CURL_ERROR_SIZE bytes and outlive the transfer).
static inline CURLcode bookpipe_curl_setopt_error_buffer(CURL *h, char *buffer) { return curl_easy_setopt(h, CURLOPT_ERRORBUFFER, buffer); }
/// Info values of type curl_off_t (CURLINFO_TOTAL_TIME_T, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, ...).
static inline CURLcode bookpipe_curl_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
/// Info values of type char* (CURLINFO_EFFECTIVE_URL, ...). The string belongs to the handle.
static inline CURLcode bookpipe_curl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
/// curl_global_init(CURL_GLOBAL_ALL): CURL_GLOBAL_ALL is a macro expression Swift does not import.
static inline CURLcode bookpipe_curl_global_init_all(void) { return curl_global_init(CURL_GLOBAL_ALL); }
/// CURL_ERROR_SIZE as a value.
static inline int bookpipe_curl_error_size(void) { return CURL_ERROR_SIZE; }

// Used by the scan backend client (uploads, event streams, cleanup).
/// CURLOPT_POSTFIELDSIZE_LARGE and other curl_off_t options.
static inline CURLcode bookpipe_curl_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
/// CURLOPT_XFERINFOFUNCTION: called at least once a second while a transfer runs (idle timeouts).
static inline CURLcode bookpipe_curl_setopt_xferinfo_callback(CURL *h, curl_xferinfo_callback f) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, f); }
