/* libseccomp (Debian's libseccomp-dev): the system-call filter of the isolated plugin worker. */
#include <seccomp.h>
