-- POST a real customJobs create of BENCH_PAYLOAD (a payloads/jobs file) to the URL's path.
-- Environment: BENCH_PAYLOAD (file), BENCH_LIMIT (optional: stop each thread after this many
-- responses, for the end-to-end run's fixed job count).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local f = assert(io.open(os.getenv("BENCH_PAYLOAD"), "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"

local limit = tonumber(os.getenv("BENCH_LIMIT") or "0")
local seen = 0
function response(status, headers, resp_body)
  seen = seen + 1
  if limit > 0 and seen >= limit then wrk.thread:stop() end
end
