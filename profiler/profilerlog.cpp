#include "profilerlog.h"

Q_LOGGING_CATEGORY(lcProfiler, "autokernel.profiler", QtInfoMsg)
