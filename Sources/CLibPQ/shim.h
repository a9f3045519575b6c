#include <libpq-fe.h>
// libpq's API is not variadic: Swift calls it directly, no wrappers needed.
