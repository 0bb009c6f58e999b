#pragma once

#include <QLoggingCategory>

// The agent library's diagnostics ("autokernel.agent"): debug lines are off unless asked for, e.g.
// QT_LOGGING_RULES="autokernel.*.debug=true" autokernel-cli run ...
Q_DECLARE_LOGGING_CATEGORY(lcAgent)
