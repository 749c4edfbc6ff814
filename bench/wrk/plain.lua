-- Plain GETs of the URL given to wrk (the no-work endpoint, or a list with its filter).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")
