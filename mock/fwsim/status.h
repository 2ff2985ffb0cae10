// SPDX-License-Identifier: GPL-2.0-only
// Status and Result<T> live in lib/hmbtrace/status.h, shared with tools/.
#include "../../lib/hmbtrace/status.h"
