#include "services/jobs/job_state_names.h"

namespace trainyard {

std::string_view StateNameForMessage(JobState state) {
  for (const JobStateSpelling& s : kJobStateSpellings) {
    if (s.state == state) return s.name;
  }
  return kJobStateSpellings.front().name;
}

}  // namespace trainyard
