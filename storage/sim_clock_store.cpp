#include "storage/sim_clock_store.h"

#include "storage/row_codec.h"

namespace trainyard::storage {
namespace {

constexpr const char* kLoad = "SELECT " TY_MICROS("wall_epoch") ", " TY_MICROS(
    "virtual_epoch") ", speed FROM sim_clock FOR UPDATE";
constexpr const char* kUpsert =
    "INSERT INTO sim_clock (singleton, wall_epoch, virtual_epoch, speed) VALUES (true, " TY_TS(
        "$1") ", " TY_TS("$2") ", $3::double precision) ON CONFLICT (singleton) DO UPDATE SET "
    "wall_epoch = EXCLUDED.wall_epoch, virtual_epoch = EXCLUDED.virtual_epoch, speed = "
    "EXCLUDED.speed";

}  // namespace

StatusOr<std::unique_ptr<ScaledClock>> LoadSimClock(pg::Pool& pool, double speed) {
  TY_ASSIGN_OR_RETURN(auto conn, pool.Acquire());
  TY_ASSIGN_OR_RETURN(auto tx, pg::Transaction::Begin(*conn));
  TY_ASSIGN_OR_RETURN(pg::Result r, conn->Exec(kLoad));
  Timestamp wall_now = SystemClock().Now();
  if (r.rows() == 1) {
    Timestamp wall_epoch = FromUnixMicros(r.GetInt64(0, 0));
    Timestamp virtual_epoch = FromUnixMicros(r.GetInt64(0, 1));
    double stored_speed = std::stod(std::string(r.Get(0, 2)));
    if (stored_speed == speed) {
      TY_RETURN_IF_ERROR(tx.Commit());
      return std::make_unique<ScaledClock>(wall_epoch, virtual_epoch, speed);
    }
    Timestamp virtual_now = ScaledClock(wall_epoch, virtual_epoch, stored_speed).Now();
    TY_RETURN_IF_ERROR(conn->Exec(kUpsert, {MicrosParam(wall_now), MicrosParam(virtual_now),
                                            std::to_string(speed)})
                           .status());
    TY_RETURN_IF_ERROR(tx.Commit());
    return std::make_unique<ScaledClock>(wall_now, virtual_now, speed);
  }
  TY_RETURN_IF_ERROR(
      conn->Exec(kUpsert, {MicrosParam(wall_now), MicrosParam(wall_now), std::to_string(speed)})
          .status());
  TY_RETURN_IF_ERROR(tx.Commit());
  return std::make_unique<ScaledClock>(wall_now, wall_now, speed);
}

}  // namespace trainyard::storage
