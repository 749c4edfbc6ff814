-- Shared by every wrk script here: print one JSON line with the figures `bench/run` records.
-- wrk calls done() once, after all threads finish.
function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write +
                 summary.errors.status + summary.errors.timeout
  io.write(string.format(
    '{"requests":%d,"seconds":%.3f,"rps":%.1f,"errors":%d,"non2xx":%d,' ..
    '"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f}\n',
    summary.requests, secs, summary.requests / secs, errors, summary.errors.status,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
end
