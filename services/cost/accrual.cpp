#include "services/cost/accrual.h"

#include <cmath>

namespace trainyard::cost {

int64_t AccruedMicros(int64_t hourly_price_micros, Duration held) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(held).count();
  return static_cast<int64_t>(std::llround(static_cast<long double>(hourly_price_micros) *
                                           static_cast<long double>(us) / 3.6e9L));
}

int64_t RunningMicros(const std::vector<OpenAdmission>& open, Timestamp now) {
  int64_t total = 0;
  for (const OpenAdmission& a : open) {
    if (a.admitted_at < now) total += AccruedMicros(a.hourly_price_micros, now - a.admitted_at);
  }
  return total;
}

double RunningUsd(double hourly_price_usd, Timestamp since, Timestamp now) {
  if (now <= since) return 0;
  const double hours = std::chrono::duration<double>(now - since).count() / 3600;
  return hourly_price_usd * hours;
}

}  // namespace trainyard::cost
