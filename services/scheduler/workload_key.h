#pragma once
// The number the scheduler's core keys a workload by. Jobs and persistent resources' holds wait
// for capacity and take it alike, so the core queues both under one key: a job's id, or a hold's
// HoldKey (the resource's uid negated; ids and uids are both positive). The encoding stays between
// the core and what feeds it; CycleResult says which workload each decision is about.
#include <cstdint>

namespace trainyard {

constexpr int64_t HoldKey(int64_t resource_uid) { return -resource_uid; }
constexpr bool IsHoldKey(int64_t key) { return key < 0; }
constexpr int64_t ResourceUidOfHoldKey(int64_t key) { return -key; }

}  // namespace trainyard
