// libedit's readline interface: line editing (arrows, Home/End, Ctrl-A/E, Backspace) and history
// for the terminal review walk. Debian package libedit-dev.
#include <stdio.h>
#include <stdlib.h>
#include <editline/readline.h>
