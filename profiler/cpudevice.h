#pragma once

#include "deviceinfo.h"

namespace ak {

// Describes the host CPU as a DeviceInfo, the device every machine has. Peaks are left at 0:
// a CPU roof is not something the product claims to know.
DeviceInfo cpuDevice();

} // namespace ak
