#pragma once
// The API as `serve` runs it: its listener's options, what it refuses without tokens, and the
// services it answers with, on the control plane.
#include "api/api_service.h"
#include "api/http_server.h"
#include "api/request_guard.h"
#include "cmd/app/control_plane.h"
#include "cmd/app/pg_adapters.h"
#include "cmd/app/serve_flags.h"
#include "cmd/app/serve_options.h"
#include "services/metrics/registry.h"
#include "services/request_gauge.h"
#include "services/whatif/whatif_service.h"

namespace trainyard::app {

// The API's listener at `flags.api`: --http-threads run the writes, twice the cores the reads,
// counted in `writes_in_flight` (which must outlive the listener).
api::ServerOptions ApiServerOptions(const ServeOptions& options, const ServeFlags& flags,
                                    RequestGauge& writes_in_flight);

// What a listener of this server refuses: without tokens, a Host neither loopback nor an
// --allowed-host; `https`: the listener speaks HTTPS, so its own pages are https://.
api::RequestGuardOptions ListenerGuard(const ServeOptions& options, const ServeFlags& flags,
                                       bool https);

// Every service of the control plane, tokens when the flags ask for them, the rate limits,
// /metrics from `metrics` and the what-if runs; all must outlive the API they are attached to.
api::ApiService::Services ApiServices(ControlPlane& plane, PgAdapters& adapters,
                                      const ServeOptions& options, const ServeFlags& flags,
                                      metrics::Registry& metrics, WhatIfService& whatif);

}  // namespace trainyard::app
