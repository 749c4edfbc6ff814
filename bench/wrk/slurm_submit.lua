-- POST BENCH_PAYLOAD (a slurmrestd v0.0.38 job submit body) with the token headers Slurm's REST
-- API takes. Environment: BENCH_PAYLOAD (file), BENCH_SLURM_USER, BENCH_SLURM_TOKEN.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local f = assert(io.open(os.getenv("BENCH_PAYLOAD"), "rb"))
local body = f:read("*a")
f:close()

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["X-SLURM-USER-NAME"] = assert(os.getenv("BENCH_SLURM_USER"))
wrk.headers["X-SLURM-USER-TOKEN"] = assert(os.getenv("BENCH_SLURM_TOKEN"))
