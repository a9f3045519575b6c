#include "jshim.h"
int bookpipe_jshim_version(void) { return 1; }
