#include "corelog.h"

Q_LOGGING_CATEGORY(lcCore, "autokernel.core", QtInfoMsg)
