#pragma once
// The background loops (scheduler, runtime) yield the CPU to request threads: a poll or a create
// waits on them otherwise when both cores are busy (issue 37; docs/performance.md).
namespace trainyard {

// Lowers the calling thread's CPU priority by 10 nice steps (at most to 19, per thread); best
// effort.
void LowerThisThreadsPriority();

}  // namespace trainyard
