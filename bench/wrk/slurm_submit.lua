-- POST BENCH_PAYLOAD (a slurmrestd v0.0.38 job submit body): create.lua's request, plus the token
-- headers Slurm's REST API takes. Environment: BENCH_PAYLOAD (file), BENCH_SLURM_USER,
-- BENCH_SLURM_TOKEN.
dofile(os.getenv("BENCH_LUA_DIR") .. "/create.lua")

wrk.headers["X-SLURM-USER-NAME"] = assert(os.getenv("BENCH_SLURM_USER"))
wrk.headers["X-SLURM-USER-TOKEN"] = assert(os.getenv("BENCH_SLURM_TOKEN"))
