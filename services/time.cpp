#include "services/time.h"

#include <cstdio>

namespace trainyard {

std::string FormatUtcMicros(Timestamp t) {
  namespace chr = std::chrono;
  const chr::sys_days day = chr::floor<chr::days>(t);
  const chr::year_month_day date(day);
  const chr::hh_mm_ss<chr::microseconds> time(t - day);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d.%06dZ", int(date.year()),
                unsigned(date.month()), unsigned(date.day()), int(time.hours().count()),
                int(time.minutes().count()), int(time.seconds().count()),
                int(time.subseconds().count()));
  return buf;
}

}  // namespace trainyard
