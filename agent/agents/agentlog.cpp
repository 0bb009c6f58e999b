#include "agents/agentlog.h"

Q_LOGGING_CATEGORY(lcAgent, "autokernel.agent", QtInfoMsg)
