/* Lets valgrind run bookpipe (benchmarks/import/instructions.sh preloads it).
 *
 * Swift's async main ends in dispatch_main(), which ends the main thread with pthread_exit and
 * leaves libdispatch's main queue to a worker; valgrind 3.19 dies on that ("Valgrind received a
 * signal 11") before the program does anything. This dispatch_main drains the main queue on the
 * main thread instead, the way a CoreFoundation run loop does, and never returns (the program
 * ends with exit()). Not for production use: only under valgrind. */
#include <poll.h>
#include <stdint.h>
#include <unistd.h>

extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

void dispatch_main(void) {
    int handle = _dispatch_get_main_queue_handle_4CF();
    for (;;) {
        struct pollfd wait = {handle, POLLIN, 0};
        poll(&wait, 1, -1);
        uint64_t wakeups;
        (void)read(handle, &wakeups, sizeof wakeups);
        _dispatch_main_queue_callback_4CF(0);
    }
}
