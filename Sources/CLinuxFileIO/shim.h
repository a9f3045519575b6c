// Linux file calls that glibc declares only under _GNU_SOURCE, which Swift's Glibc module is
// built without. Declared here as glibc defines them (<bits/fcntl-linux.h>); they link from libc.
#ifndef BOOKPIPE_CLINUXFILEIO_SHIM_H
#define BOOKPIPE_CLINUXFILEIO_SHIM_H
#ifdef __linux__
#include <stdint.h>

/// Starts writing the file's dirty pages in [offset, offset + nbytes) (0 = to the end); returns at once.
#define BOOKPIPE_SYNC_FILE_RANGE_WRITE 2u
extern int sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags);
#endif
#endif
