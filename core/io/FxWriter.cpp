// Implemented in progress.
#include "io/GraphFile.h"
