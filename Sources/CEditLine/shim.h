// libedit's readline interface: line editing (arrows, Home/End, Ctrl-A/E, Backspace) and history
// for the terminal review walk. Debian package libedit-dev.
#include <stdio.h>
#include <stdlib.h>
#include <editline/readline.h>

// The walk handles Ctrl-C itself (outside any signal handler): libedit must not catch signals,
// since its handler flushes a stdio stream that another thread may be holding.
static inline void bookpipe_readline_leave_signals_alone(void) { rl_catch_signals = 0; }
