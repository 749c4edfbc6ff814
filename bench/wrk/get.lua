-- GET (poll) jobs picked at random from BENCH_NAMES, a file of job names, one per line.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local names = {}
for line in io.lines(os.getenv("BENCH_NAMES")) do names[#names + 1] = line end
assert(#names > 0, "BENCH_NAMES is empty")
math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))

function request()
  return wrk.format("GET", "/v1/" .. names[math.random(#names)])
end
