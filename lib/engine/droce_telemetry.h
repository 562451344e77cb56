/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The droce authors
 */

#ifndef DROCE_TELEMETRY_H
#define DROCE_TELEMETRY_H

#include "droce_engine_pvt.h"

/*
 * Telemetry (lib/engine/droce_telemetry.c).
 */

/** Register the /droce/ telemetry commands (once the devices exist). */
void droce_telemetry_init(void);

/** Refuse telemetry requests from now on: the engine is stopping. */
void droce_telemetry_close(void);

#endif /* DROCE_TELEMETRY_H */
