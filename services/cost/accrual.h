#pragma once
// What a price per hour comes to over time: the one rounding rule every stored cost follows (a
// job's admission as it ends, a persistent resource's hold as its price changes or it ends), and
// the running figure a job's read adds for the time since. Money is kept in micro-dollars
// (int64); Usd is how it is shown.
#include <cstdint>
#include <vector>

#include "services/time.h"

namespace trainyard::cost {

// `hourly_price_micros` over `held`, in micro-dollars rounded to the nearest, halves away from
// zero: price × held µs / 3.6e9 in long double, which is what PostgreSQL's numeric → bigint cast
// gives for the same figures (storage/ writes job accruals that way), so both stores agree to the
// micro-dollar. `held` is taken as given.
int64_t AccruedMicros(int64_t hourly_price_micros, Duration held);

// What an admission at `hourly_price_usd` has run up from `since` to `now`, unrounded, for a read
// to add to the stored cost (the job's costUsd between its writes); 0 unless `now` is after
// `since`.
double RunningUsd(double hourly_price_usd, Timestamp since, Timestamp now);

// An admission not ended yet: what it costs an hour and when it began.
struct OpenAdmission {
  int64_t hourly_price_micros = 0;
  Timestamp admitted_at;
};

// What `open` admissions have run up by `now`, each rounded as AccruedMicros (one that begins
// after `now` adds nothing): the admin view's and /metrics' running cost of a consumption model.
int64_t RunningMicros(const std::vector<OpenAdmission>& open, Timestamp now);

inline double Usd(int64_t micros) { return static_cast<double>(micros) / 1e6; }

}  // namespace trainyard::cost
