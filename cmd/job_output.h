#pragma once
// Human output of the client verbs: a job as key/value lines, lists as a table, and the one line
// per change that `--wait` prints. `--json` output does not come through here: it is the raw JSON.
#include <chrono>
#include <ostream>
#include <vector>

#include "sdk/resources.h"

namespace trainyard::cmd {

void PrintJob(std::ostream& out, const sdk::Job& job);
// ID, DISPLAY NAME, STATE, CREATED, REASON; columns as wide as their widest cell.
void PrintJobTable(std::ostream& out, const std::vector<sdk::Job>& jobs);
// "  12.3s  JOB_STATE_QUEUED  queue position 2 · NO_CAPACITY: no free capacity …"
void PrintWaitLine(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job);
// The last line of a wait: the terminal state, and the job's error if it has one.
void PrintJobOutcome(std::ostream& out, std::chrono::milliseconds elapsed, const sdk::Job& job);
void PrintOperation(std::ostream& out, const sdk::Operation& op);

}  // namespace trainyard::cmd
