#pragma once
// Fault injection for tests and demos, outside the Vertex surface:
//   POST /trainyard/v1/fleet:injectNodeFailure    {"node": "<node name>"}
//   POST /trainyard/v1/fleet:injectSpotPreemption {"node"|"pool"|"zone": …, "count": N |
//   "fraction": f} GET  /trainyard/v1/fleet/injections/{id}      what the simulator did with it
// A request is answered once it is stored; the scheduler leader applies it in virtual time.
#include "api/router.h"
#include "services/fleet/fault_injection.h"

namespace trainyard::api {

class FleetInjectionHandler {
 public:
  explicit FleetInjectionHandler(FaultInjector& injector) : injector_(injector) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Inject(FaultKind kind, const HttpRequest& request);
  StatusOr<HttpResponse> Get(const HttpRequest& request, const RouteMatch& match);

  FaultInjector& injector_;
};

}  // namespace trainyard::api
