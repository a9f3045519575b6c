#pragma once
// Placeholder: the imaging issue fills this C shim over libjpeg (setjmp error handling).
int bookpipe_jshim_version(void);
