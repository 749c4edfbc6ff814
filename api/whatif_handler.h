#pragma once
// What-if runs (fleet admins): GET /trainyard/v1/whatif/scenarios, the scenarios this server
// offers; POST /trainyard/v1/whatif/runs {"scenarios": [...], "seed": N}, a comparison run in the
// background (services/whatif); GET /trainyard/v1/whatif/runs/{run}, its state, progress and, once
// done, the comparison and its plots.
#include "api/router.h"
#include "services/whatif/whatif_service.h"

namespace trainyard::api {

class WhatIfHandler {
 public:
  explicit WhatIfHandler(WhatIfService& whatif) : whatif_(whatif) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Start(const HttpRequest& request);
  // The run; with `cancel`, after asking it to end (POST …/runs/N:cancel).
  StatusOr<HttpResponse> Get(const RouteMatch& match, bool cancel);

  WhatIfService& whatif_;
};

}  // namespace trainyard::api
