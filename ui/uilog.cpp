#include "uilog.h"

Q_LOGGING_CATEGORY(lcUi, "autokernel.ui", QtInfoMsg)
