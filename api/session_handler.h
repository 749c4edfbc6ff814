#pragma once
// GET /trainyard/v1/session: the caller as the console needs it — whether the server asks for
// tokens, the caller's role (so a page shows no button it may not use), whether it is the fleet's
// admin, and the projects it may see (the project picker).
#include "api/router.h"
#include "services/jobs/job_repository.h"

namespace trainyard::api {

class SessionHandler {
 public:
  // `projects` may be null (no picker: the session names the caller's own project only).
  SessionHandler(ProjectRepository* projects, bool tokens_on)
      : projects_(projects), tokens_on_(tokens_on) {}
  void Register(Router& router);

 private:
  StatusOr<HttpResponse> Get(const HttpRequest& request) const;

  ProjectRepository* projects_;
  bool tokens_on_;
};

}  // namespace trainyard::api
